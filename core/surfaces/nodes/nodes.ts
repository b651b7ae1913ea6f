// Paired nodes as the operator sees them: found by id or alias, approved for
// commands of their advertised catalog (binding each command's descriptor
// hash), denied or revoked. Each change tells the node's connection
// (NODE_SIGNALS.changed) in its own transaction.
import type { ApproveNodeRequest, Node, NodeState, RevokeNodeRequest } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../../pagination.js';
import { notifySignal } from '../../signals/signals.js';
import type { Db, Queryable } from '../../store/db.js';
import { endInvocation } from './invocation-endings.js';
import { OPEN_STATES } from './invocation-states.js';
import { NODE_SIGNALS } from './node-gateway-port.js';
import { NODE_COLUMNS, NODE_STATE_SQL, nodeView, type InvocationRow, type NodeRow } from './node-views.js';
import { descriptorHashes } from './wire/catalog.js';

/** The node `ref` names in the project (its id, else an alias); null when none. */
export async function findNode(q: Queryable, projectId: string, ref: string, forUpdate = false): Promise<NodeRow | null> {
  const { rows } = await q.query<NodeRow>(
    `SELECT ${NODE_COLUMNS} FROM nodes n
     WHERE n.project_id = $1 AND (n.id = $2 OR n.id = (SELECT node_id FROM node_aliases WHERE project_id = $1 AND alias = $2))${forUpdate ? ' FOR UPDATE OF n' : ''}`,
    [projectId, ref],
  );
  return rows[0] ?? null;
}

export async function requireNode(q: Queryable, projectId: string, ref: string, forUpdate = false): Promise<NodeRow> {
  const row = await findNode(q, projectId, ref, forUpdate);
  if (!row) throw new PalaiError('not-found', `No node ${JSON.stringify(ref)} in this project (by id or alias).`);
  return row;
}

export async function nodeById(q: Queryable, nodeId: string, forUpdate = false): Promise<NodeRow | null> {
  const { rows } = await q.query<NodeRow>(`SELECT ${NODE_COLUMNS} FROM nodes n WHERE n.id = $1${forUpdate ? ' FOR UPDATE OF n' : ''}`, [nodeId]);
  return rows[0] ?? null;
}

/** Oldest first: node ids come from keys, not the clock, so the cursor is a node and the order its creation. */
export async function listNodes(q: Queryable, projectId: string, query: PageRequest & { state?: NodeState; alias?: string }): Promise<Page<Node>> {
  const { rows } = await q.query<NodeRow>(
    `SELECT * FROM (SELECT ${NODE_COLUMNS} FROM nodes n WHERE n.project_id = $1
       AND ($2::text IS NULL OR (n.created_at, n.id) > (SELECT c.created_at, c.id FROM nodes c WHERE c.id = $2))) listed
     WHERE ($3::text IS NULL OR state = $3) AND ($4::text IS NULL OR $4 = ANY(aliases))
     ORDER BY created_at, id LIMIT $5`,
    [projectId, query.after ?? null, query.state ?? null, query.alias ?? null, fetchSize(query)],
  );
  return toPage(rows, query, nodeView);
}

async function setAliases(tx: Queryable, node: NodeRow, aliases: string[]): Promise<void> {
  const unique = [...new Set(aliases)];
  const { rows } = await tx.query<{ alias: string; node_id: string }>(
    'SELECT alias, node_id FROM node_aliases WHERE project_id = $1 AND alias = ANY($2::text[]) AND node_id <> $3',
    [node.project_id, unique, node.id],
  );
  if (rows.length > 0) {
    const taken = new Set(rows.map((r) => r.alias));
    throw new PalaiError('invalid-request', `The alias ${JSON.stringify(rows[0].alias)} names another node of this project.`, {
      errors: aliases.flatMap((alias, i) => (taken.has(alias) ? [{ pointer: `/aliases/${i}`, detail: 'names another node' }] : [])),
    });
  }
  await tx.query('DELETE FROM node_aliases WHERE node_id = $1', [node.id]);
  for (const [position, alias] of unique.entries()) {
    await tx.query('INSERT INTO node_aliases (project_id, alias, node_id, position) VALUES ($1, $2, $3, $4)', [node.project_id, alias, node.id, position]);
  }
}

export async function approveNode(db: Db, projectId: string, ref: string, request: ApproveNodeRequest): Promise<Node> {
  return db.transaction(async (tx) => {
    const node = await requireNode(tx, projectId, ref, true);
    if (node.revoked_at) throw new PalaiError('invalid-state', `Node ${node.id} is revoked; a revoked node cannot be approved again.`);
    const hashes = descriptorHashes(node.catalog);
    const outside = request.allowed_commands.map((command, i) => ({ command, i })).filter(({ command }) => !Object.hasOwn(hashes, command));
    if (outside.length > 0) {
      throw new PalaiError(
        'invalid-request',
        `The command ${JSON.stringify(outside[0].command)} is not in the catalog node ${node.id} advertises (${Object.keys(hashes).join(', ') || 'none'}).`,
        { errors: outside.map(({ i }) => ({ pointer: `/allowed_commands/${i}`, detail: 'is not in the advertised catalog' })) },
      );
    }
    const allowed = [...new Set(request.allowed_commands)];
    if (request.aliases) await setAliases(tx, node, request.aliases);
    await tx.query(
      `UPDATE nodes SET allowed_commands = $2::text[], approved_descriptors = $3, approved_catalog_hash = catalog_hash, approved_catalog = catalog, approved_at = now(),
         display_name = coalesce($4, display_name), updated_at = now() WHERE id = $1`,
      [node.id, allowed, JSON.stringify(Object.fromEntries(allowed.map((c) => [c, hashes[c]]))), request.display_name ?? null],
    );
    await notifySignal(tx, NODE_SIGNALS.changed, node.id);
    return nodeView((await nodeById(tx, node.id))!);
  });
}

/** Revokes the node (idempotent) and ends its open invocations as canceled, answering their calls. */
async function revokeIn(tx: Queryable, node: NodeRow, reason: string | null): Promise<Node> {
  if (!node.revoked_at) {
    await tx.query('UPDATE nodes SET revoked_at = now(), revocation_reason = $2, updated_at = now() WHERE id = $1', [node.id, reason]);
    const { rows } = await tx.query<InvocationRow>('SELECT * FROM node_invocations WHERE node_id = $1 AND state = ANY($2::text[]) ORDER BY id FOR UPDATE', [
      node.id,
      OPEN_STATES,
    ]);
    for (const row of rows) {
      const sent = row.state !== 'prepared';
      await endInvocation(tx, row, {
        state: 'canceled',
        failureCode: 'INVOCATION_CANCELED',
        failureMessage: 'The node was revoked.',
        terminationConfirmed: sent ? false : null,
      });
    }
    await notifySignal(tx, NODE_SIGNALS.changed, node.id);
  }
  return nodeView((await nodeById(tx, node.id))!);
}

export async function denyNode(db: Db, projectId: string, ref: string): Promise<Node> {
  return db.transaction(async (tx) => {
    const node = await requireNode(tx, projectId, ref, true);
    if (node.approved_at && !node.revoked_at) {
      throw new PalaiError('invalid-state', `Node ${node.id} is paired already; revoke it instead (POST /v1/nodes/${node.id}/revoke).`);
    }
    return revokeIn(tx, node, 'denied');
  });
}

export async function revokeNode(db: Db, projectId: string, ref: string, request: RevokeNodeRequest = {}): Promise<Node> {
  return db.transaction(async (tx) => revokeIn(tx, await requireNode(tx, projectId, ref, true), request.reason ?? null));
}

export async function countNodes(q: Queryable): Promise<Partial<Record<NodeState, number>>> {
  const { rows } = await q.query<{ state: NodeState; count: number }>(
    `SELECT state, count(*)::int AS count FROM (SELECT ${NODE_STATE_SQL} AS state FROM nodes n) states GROUP BY state`,
  );
  return Object.fromEntries(rows.map((r) => [r.state, r.count]));
}
