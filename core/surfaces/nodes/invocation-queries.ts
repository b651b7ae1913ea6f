// The ledger as the operator reads it: a node's invocations, newest first, and one by id.
import type { NodeInvocation, NodeInvocationState } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../../pagination.js';
import type { Db, Queryable } from '../../store/db.js';
import { cancelInvocation } from './invocation-ledger.js';
import { requireNode } from './nodes.js';
import { invocationView, type InvocationRow } from './node-views.js';

const notFound = (id: string) => new PalaiError('not-found', `No node invocation with id ${JSON.stringify(id)} in this project.`);

export async function listInvocations(q: Queryable, projectId: string, ref: string, page: PageRequest): Promise<Page<NodeInvocation>> {
  const node = await requireNode(q, projectId, ref);
  const { rows } = await q.query<InvocationRow>(
    'SELECT * FROM node_invocations WHERE node_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3',
    [node.id, page.after ?? null, fetchSize(page)],
  );
  return toPage(rows, page, invocationView);
}

export async function getInvocation(q: Queryable, projectId: string, id: string): Promise<NodeInvocation> {
  const { rows } = await q.query<InvocationRow>('SELECT * FROM node_invocations WHERE project_id = $1 AND id = $2', [projectId, id]);
  if (!rows[0]) throw notFound(id);
  return invocationView(rows[0]);
}

export async function cancelInvocationView(db: Db, projectId: string, id: string): Promise<NodeInvocation> {
  const row = await cancelInvocation(db, projectId, id);
  if (!row) throw notFound(id);
  return invocationView(row);
}

export async function countInvocations(q: Queryable): Promise<Partial<Record<NodeInvocationState, number>>> {
  const { rows } = await q.query<{ state: NodeInvocationState; count: number }>('SELECT state, count(*)::int AS count FROM node_invocations GROUP BY state');
  return Object.fromEntries(rows.map((r) => [r.state, r.count]));
}
