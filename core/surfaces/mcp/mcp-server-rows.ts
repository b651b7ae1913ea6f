// The mcp_servers table: a project's Streamable HTTP servers. Registering one
// checks its URL and stores the header values in the secret store (the row
// keeps their references and last fours); nothing is called until the tools
// are first listed. The tool list is cached on the row.
import type { CreateMcpServerRequest, McpServer } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { newId } from '../../ids.js';
import { recordAnswer, reserveKey, type IdempotencyClaim } from '../../idempotency/idempotency.js';
import { unixSeconds } from '../../json.js';
import { fetchSize, type PageRequest } from '../../pagination.js';
import { findByRef, type ResourceTable } from '../../resources/find-by-ref.js';
import type { SecretStore } from '../../secrets/secret-port.js';
import { needsSecretKey, removeSealed, revealNamed, sealNamed, type NamedSecret, type Sealing } from '../../secrets/sealed-fields.js';
import { isUniqueViolation, type Db, type Queryable } from '../../store/db.js';
import type { McpToolDescription } from './mcp-servers-port.js';

/** An MCP server's header values, in the secret store. */
const HEADERS: Sealing = { purpose: 'mcp-header', noSecretKey: () => needsSecretKey('Storing headers', '/headers') };

export interface McpServerRow {
  id: string;
  project_id: string;
  name: string;
  url: string;
  headers: NamedSecret[];
  tools: McpToolDescription[] | null;
  tools_listed_at: Date | null;
  created_at: Date;
}

export const httpServerView = (row: McpServerRow): McpServer => ({
  id: row.id,
  object: 'mcp_server',
  name: row.name,
  transport: 'streamable_http',
  url: row.url,
  headers: Object.fromEntries(row.headers.map((h) => [h.name, { set: true, last4: h.last4 }])),
  tools_listed_at: unixSeconds(row.tools_listed_at),
  created_at: unixSeconds(row.created_at),
});

/** The URL problem, or null: http(s) only, and no user or password in it (credentials belong in `headers`, which are kept secret). */
export function urlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password; send credentials in headers, which are stored encrypted';
  if (url.hash !== '') return 'must not have a fragment';
  return null;
}

const SERVERS: ResourceTable = { table: 'mcp_servers', idPrefix: 'mcps_' };

/** The registered server named by id (`mcps_…`) or name, or null (the operator's stdio servers are not rows). */
export const findServerRow = (db: Queryable, projectId: string, ref: string): Promise<McpServerRow | null> =>
  findByRef<McpServerRow>(db, SERVERS, projectId, ref);

const nameTaken = (name: string) => new PalaiError('conflict', `An MCP server named ${JSON.stringify(name)} already exists.`);

export async function insertServer(
  db: Db,
  secrets: SecretStore,
  projectId: string,
  request: CreateMcpServerRequest,
  idem?: IdempotencyClaim,
): Promise<McpServer> {
  const problem = urlProblem(request.url);
  if (problem) throw new PalaiError('validation-failed', `url ${problem}.`, { errors: [{ pointer: '/url', detail: problem }] });
  if (await findServerRow(db, projectId, request.name)) throw nameTaken(request.name);
  const id = newId('mcps');
  try {
    return await db.transaction(async (tx) => {
      await reserveKey(tx, projectId, idem, id);
      // In this transaction: a server that is not created leaves no secret behind.
      const stored = await sealNamed(tx, secrets, projectId, HEADERS, request.headers ?? {});
      const { rows } = await tx.query<McpServerRow>('INSERT INTO mcp_servers (id, project_id, name, url, headers) VALUES ($1, $2, $3, $4, $5) RETURNING *', [
        id,
        projectId,
        request.name,
        request.url,
        JSON.stringify(stored),
      ]);
      const view = httpServerView(rows[0]);
      await recordAnswer(tx, projectId, idem, 201, view, id);
      return view;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(request.name);
    throw error;
  }
}

/** A page of the project's registered servers, oldest first. */
export async function listServerRows(db: Queryable, projectId: string, page: PageRequest): Promise<McpServerRow[]> {
  const { rows } = await db.query<McpServerRow>('SELECT * FROM mcp_servers WHERE project_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3', [
    projectId,
    page.after ?? null,
    fetchSize(page),
  ]);
  return rows;
}

/** Deletes the server and, in the same transaction, its stored header values. */
export async function deleteServerRow(db: Db, secrets: SecretStore, row: McpServerRow): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('DELETE FROM mcp_servers WHERE id = $1', [row.id]);
    await removeSealed(
      tx,
      secrets,
      row.project_id,
      row.headers.map((h) => h.secret_id),
    );
  });
}

/** The header values, for the one call that sends them. */
export const revealHeaders = (db: Queryable, secrets: SecretStore, row: McpServerRow): Promise<Record<string, string>> =>
  revealNamed(db, secrets, row.project_id, row.headers);

export async function saveServerTools(db: Queryable, serverId: string, tools: McpToolDescription[]): Promise<Date> {
  const { rows } = await db.query<{ tools_listed_at: Date }>(
    'UPDATE mcp_servers SET tools = $2, tools_listed_at = now() WHERE id = $1 RETURNING tools_listed_at',
    [serverId, JSON.stringify(tools)],
  );
  return rows[0]?.tools_listed_at ?? new Date();
}
