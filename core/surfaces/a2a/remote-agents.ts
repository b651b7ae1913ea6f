// Remote agents: a project's named A2A agents elsewhere, which its agents call
// as tools (`{type: "a2a", remote_agent}`). Registering one fetches its card
// through the egress guard (so a name cannot point the server at its own
// network) and keeps it; the headers sent with every call (an Authorization,
// say) are kept in the secret store and shown only by name and last four.
// The A2A tool provider reads the card and the headers back with `connection`.
import type { CreateRemoteAgentRequest, RemoteAgent } from '../../../generated/schemas.js';
import type { EgressFetch } from '../../egress/egress-port.js';
import { PalaiError } from '../../errors/palai-error.js';
import { newId } from '../../ids.js';
import { recordAnswer, reserveKey, type IdempotencyClaim } from '../../idempotency/idempotency.js';
import { unixSeconds } from '../../json.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../../pagination.js';
import { resourceLookup } from '../../resources/find-by-ref.js';
import type { SecretStore } from '../../secrets/secret-port.js';
import { needsSecretKey, removeSealed, revealNamed, sealNamed, type NamedSecret, type Sealing } from '../../secrets/sealed-fields.js';
import { isUniqueViolation, type Db, type Queryable } from '../../store/db.js';

/** A remote agent's header values, in the secret store. */
const HEADERS: Sealing = { purpose: 'remote-agent-header', noSecretKey: () => needsSecretKey('Storing headers', '/headers') };
/** A card larger than this is refused: it is kept in a row and read on every run. */
const MAX_CARD_BYTES = 256 * 1024;
const CARD_FETCH_TIMEOUT_MS = 10_000;

interface RemoteAgentRow {
  id: string;
  project_id: string;
  name: string;
  card_url: string;
  card: Record<string, unknown>;
  headers: NamedSecret[];
  created_at: Date;
}

/** What the A2A tool provider needs to call the agent: its card as fetched, and the headers' values. */
export interface RemoteAgentConnection {
  id: string;
  name: string;
  cardUrl: string;
  /** The card's JSON as the agent served it. */
  card: Record<string, unknown>;
  headers: Record<string, string>;
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

export const remoteAgentView = (row: RemoteAgentRow): RemoteAgent => ({
  id: row.id,
  object: 'remote_agent',
  name: row.name,
  card_url: row.card_url,
  card: {
    name: str(row.card.name),
    description: str(row.card.description),
    version: str(row.card.version),
    streaming: (row.card.capabilities as { streaming?: unknown } | undefined)?.streaming === true,
  },
  headers: Object.fromEntries(row.headers.map((h) => [h.name, { set: true, last4: h.last4 }])),
  created_at: unixSeconds(row.created_at)!,
});

/** The remote agent named by id (`ragt_…`) or name: `findRemoteAgent` answers null, `requireRemoteAgent` not-found. */
export const { find: findRemoteAgent, require: requireRemoteAgent } = resourceLookup<RemoteAgentRow>(
  { table: 'remote_agents', idPrefix: 'ragt_' },
  (ref) => new PalaiError('not-found', `No remote agent with id or name ${JSON.stringify(ref)} in this project.`),
);

const cardProblem = (url: string, detail: string) =>
  new PalaiError('invalid-request', `The agent card at ${url} could not be used: ${detail}.`, { errors: [{ pointer: '/card_url', detail }] });

/** Fetches the card through the egress guard, with the agent's headers; it must be a JSON object with a name. */
async function fetchCard(egress: EgressFetch, url: string, headers: Record<string, string>): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await egress(url, {
      headers: { accept: 'application/json', 'a2a-version': '1.0', ...headers },
      signal: AbortSignal.timeout(CARD_FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    if (error instanceof PalaiError) throw error;
    const cause = error instanceof Error && error.cause instanceof PalaiError ? error.cause : null;
    if (cause) throw cause;
    throw cardProblem(url, error instanceof Error && error.name === 'TimeoutError' ? 'it did not answer in time' : 'it could not be reached');
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw cardProblem(url, `it answered HTTP ${response.status}`);
  }
  const text = await response.text();
  if (text.length > MAX_CARD_BYTES) throw cardProblem(url, `it is larger than ${MAX_CARD_BYTES} bytes`);
  let card: unknown;
  try {
    card = JSON.parse(text);
  } catch {
    throw cardProblem(url, 'it is not JSON');
  }
  if (typeof card !== 'object' || card === null || Array.isArray(card) || typeof (card as { name?: unknown }).name !== 'string') {
    throw cardProblem(url, 'it is not an agent card (a JSON object with a name)');
  }
  return card as Record<string, unknown>;
}

export async function createRemoteAgent(
  db: Db,
  secrets: SecretStore,
  egress: EgressFetch,
  projectId: string,
  request: CreateRemoteAgentRequest,
  idem?: IdempotencyClaim,
): Promise<RemoteAgent> {
  const headers = request.headers ?? {};
  if (await findRemoteAgent(db, projectId, request.name)) {
    throw new PalaiError('conflict', `A remote agent named ${JSON.stringify(request.name)} already exists.`);
  }
  const card = await fetchCard(egress, request.card_url, headers);
  const id = newId('ragt');
  try {
    return await db.transaction(async (tx) => {
      await reserveKey(tx, projectId, idem, id);
      // In this transaction: a remote agent that is not created leaves no secret behind.
      const stored = await sealNamed(tx, secrets, projectId, HEADERS, headers);
      const { rows } = await tx.query<RemoteAgentRow>(
        `INSERT INTO remote_agents (id, project_id, name, card_url, card, headers) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [id, projectId, request.name, request.card_url, JSON.stringify(card), JSON.stringify(stored)],
      );
      const view = remoteAgentView(rows[0]);
      await recordAnswer(tx, projectId, idem, 201, view, id);
      return view;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new PalaiError('conflict', `A remote agent named ${JSON.stringify(request.name)} already exists.`);
    throw error;
  }
}

export async function listRemoteAgents(db: Db, projectId: string, page: PageRequest): Promise<Page<RemoteAgent>> {
  const { rows } = await db.query<RemoteAgentRow>('SELECT * FROM remote_agents WHERE project_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3', [
    projectId,
    page.after ?? null,
    fetchSize(page),
  ]);
  return toPage(rows, page, remoteAgentView);
}

/** Deletes the remote agent and, in the same transaction, its stored header values. */
export async function deleteRemoteAgent(db: Db, secrets: SecretStore, projectId: string, ref: string): Promise<string> {
  return db.transaction(async (tx) => {
    const row = await requireRemoteAgent(tx, projectId, ref);
    await tx.query('DELETE FROM remote_agents WHERE id = $1', [row.id]);
    await removeSealed(
      tx,
      secrets,
      projectId,
      row.headers.map((h) => h.secret_id),
    );
    return row.id;
  });
}

/** The card and the headers' values, for the one run that calls the agent. */
export async function remoteAgentConnection(db: Db, secrets: SecretStore, projectId: string, ref: string): Promise<RemoteAgentConnection> {
  const row = await requireRemoteAgent(db, projectId, ref);
  const headers = await revealNamed(db, secrets, projectId, row.headers);
  return { id: row.id, name: row.name, cardUrl: row.card_url, card: row.card, headers };
}
