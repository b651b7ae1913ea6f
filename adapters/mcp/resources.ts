// The caller's project as MCP resources: each response (its output as text and
// its whole state as JSON) and each session (its items as JSON), named by
// palai:// URIs that follow the two resource templates. Listing is newest
// first across both kinds; a URI that names nothing of the project is
// "resource not found" (-32002, with the URI), as the spec says.
import {
  ErrorCode,
  McpError,
  type ListResourcesResult,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { outputText, type ResponseState } from '../../core/api/index.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { McpResourceKind, McpResourceRow } from '../../core/surfaces/mcp/mcp-resources-port.js';
import type { Item, Session } from '../../generated/schemas.js';
import { wireError } from './errors.js';

/** The spec's code for a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

const RESOURCES_PAGE_SIZE = 50;
/** A session resource holds at most this many items (its newest); `has_more` says when there are more. */
const MAX_SESSION_ITEMS = 500;
const ITEMS_PAGE_SIZE = 100;

const FOLDER: Record<McpResourceKind, string> = { response: 'responses', session: 'sessions' };
const PREFIX: Record<McpResourceKind, string> = { response: 'resp', session: 'ses' };
const ID = /^(resp|ses)_[0-9a-z]{26}$/;
const URI = /^palai:\/\/(responses|sessions)\/((?:resp|ses)_[0-9a-z]{26})$/;

export interface ResourceRef {
  kind: McpResourceKind;
  id: string;
}

export const uriOf = (ref: ResourceRef): string => `palai://${FOLDER[ref.kind]}/${ref.id}`;

/** The response or session a URI names, or null when it is not a URI Palai mints. */
export function parseUri(uri: string): ResourceRef | null {
  const match = URI.exec(uri);
  if (!match) return null;
  const kind: McpResourceKind = match[1] === 'responses' ? 'response' : 'session';
  return match[2].startsWith(`${PREFIX[kind]}_`) ? { kind, id: match[2] } : null;
}

export const resourceNotFound = (uri: string): McpError => wireError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });

/** The template argument each kind's URI is built from, and the kind a template argument names. */
export const TEMPLATE_ARGUMENT: Record<McpResourceKind, string> = { response: 'response_id', session: 'session_id' };

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: `palai://responses/{${TEMPLATE_ARGUMENT.response}}`,
    name: 'response',
    title: 'Palai response',
    description: 'A response of this project: its output text, and its whole state as JSON (status, output items, usage, error).',
  },
  {
    uriTemplate: `palai://sessions/{${TEMPLATE_ARGUMENT.session}}`,
    name: 'session',
    title: 'Palai session',
    description: 'A session of this project: its items (the conversation) as JSON, oldest first.',
    mimeType: 'application/json',
  },
];

function resourceOf(row: McpResourceRow): Resource {
  const agent = row.agentName ?? 'no agent yet';
  return {
    uri: uriOf(row),
    name: row.id,
    title: row.kind === 'response' ? `${agent}: ${row.status}` : `${agent} session`,
    description:
      row.kind === 'response'
        ? `A response of the agent ${agent}, ${row.status}; created at ${new Date(row.createdAt * 1000).toISOString()}.`
        : `A session with the agent ${agent}; created at ${new Date(row.createdAt * 1000).toISOString()}.`,
    ...(row.kind === 'session' ? { mimeType: 'application/json' } : {}),
  };
}

export async function listResources(api: McpSurfaceApi, projectId: string, cursor: string | undefined): Promise<ListResourcesResult> {
  if (cursor !== undefined && !ID.test(cursor)) throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: pass the nextCursor of a resources/list answer.');
  const page = await api.mcpResources.list(projectId, { after: cursor, limit: RESOURCES_PAGE_SIZE });
  return { resources: page.rows.map(resourceOf), ...(page.next ? { nextCursor: page.next } : {}) };
}

/** The kernel's answer, with its not-found as the resource's. */
async function orNotFound<T>(uri: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (isPalaiError(error) && error.slug === 'not-found') throw resourceNotFound(uri);
    throw error;
  }
}

/** Up to MAX_SESSION_ITEMS of the session's newest items, oldest first. */
async function sessionItems(api: McpSurfaceApi, projectId: string, sessionId: string): Promise<{ items: Item[]; hasMore: boolean }> {
  const newest: Item[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await api.sessions.items(projectId, sessionId, { limit: ITEMS_PAGE_SIZE, after, order: 'desc' });
    newest.push(...page.data);
    if (!page.has_more || !page.last_id) return { items: newest.reverse(), hasMore: false };
    if (newest.length >= MAX_SESSION_ITEMS) return { items: newest.slice(0, MAX_SESSION_ITEMS).reverse(), hasMore: true };
    after = page.last_id;
  }
}

export interface SessionContent {
  session: Session;
  items: Item[];
  has_more: boolean;
}

/** What a resource holds, or "resource not found". */
export async function readResource(api: McpSurfaceApi, projectId: string, uri: string): Promise<ReadResourceResult> {
  const ref = parseUri(uri);
  if (!ref) throw resourceNotFound(uri);
  if (ref.kind === 'response') {
    const state: ResponseState = await orNotFound(uri, () => api.responses.get(projectId, ref.id));
    return {
      contents: [
        { uri, mimeType: 'text/plain', text: outputText(state.output) },
        { uri, mimeType: 'application/json', text: JSON.stringify(state) },
      ],
    };
  }
  const session = await orNotFound(uri, () => api.sessions.get(projectId, ref.id));
  const { items, hasMore } = await orNotFound(uri, () => sessionItems(api, projectId, ref.id));
  const content: SessionContent = { session, items, has_more: hasMore };
  return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(content) }] };
}

/** Checks the URI names a resource of the project (so a subscription always watches something real). */
export async function requireResource(api: McpSurfaceApi, projectId: string, uri: string): Promise<ResourceRef> {
  const ref = parseUri(uri);
  if (!ref) throw resourceNotFound(uri);
  await orNotFound<unknown>(uri, () => (ref.kind === 'response' ? api.responses.get(projectId, ref.id) : api.sessions.get(projectId, ref.id)));
  return ref;
}
