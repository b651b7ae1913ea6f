// Reading responses, and the kernel's own view of one (ResponseState): what a
// status event carries and what the kernel API answers. Surfaces map it to their
// shapes (the REST API to OpenAI's Response object).
import type { ResponseState, RunOptions } from '../../generated/protocol-schemas.js';
import type { Item, PendingToolCall, ResponseError, ResponseStatus, ToolRisk, Usage } from '../../generated/schemas.js';
import { notFound } from '../errors/palai-error.js';
import { unixSeconds } from '../json.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../pagination.js';
import type { Queryable } from '../store/db.js';
import { isWaiting } from '../response-status.js';

interface PendingCallRow {
  call_id: string;
  name: string;
  arguments: string;
  risk: ToolRisk;
  status: 'awaiting_approval' | 'awaiting_output' | 'awaiting_input';
  question: string | null;
  approval_deadline: string | null;
  approval_display: Record<string, unknown> | null;
}

/** Run options as stored: only what the request set. */
export type StoredRunOptions = { [K in keyof RunOptions]?: NonNullable<RunOptions[K]> };

/** Every run option, null (or no tools) where the request set none; the narrowing ones (allowed_tools, limits, tool_entries) only when set. */
export function runOptionsOf(stored: StoredRunOptions): RunOptions {
  const { allowed_tools, limits, tool_entries } = stored;
  return {
    temperature: stored.temperature ?? null,
    max_output_tokens: stored.max_output_tokens ?? null,
    user: stored.user ?? null,
    top_p: stored.top_p ?? null,
    parallel_tool_calls: stored.parallel_tool_calls ?? null,
    tool_choice: stored.tool_choice ?? null,
    tools: stored.tools ?? [],
    text_format: stored.text_format ?? null,
    ...(allowed_tools !== undefined ? { allowed_tools } : {}),
    ...(limits !== undefined ? { limits } : {}),
    ...(tool_entries !== undefined ? { tool_entries } : {}),
  };
}

export interface ResponseRow {
  id: string;
  project_id: string;
  agent_id: string;
  agent_name: string;
  agent_revision_id: string;
  agent_revision: number;
  session_id: string | null;
  previous_response_id: string | null;
  status: ResponseStatus;
  input: Item[];
  instructions: string | null;
  metadata: Record<string, string>;
  /** What the request set for this run (absent: the agent's own applies). */
  options: StoredRunOptions;
  background: boolean;
  output: Item[];
  usage: Usage | null;
  error: ResponseError | null;
  model_calls: number;
  model_attempts: number;
  step_usage: Usage[];
  tool_call_count: number;
  repair_attempts: number;
  /** Messages the kernel added to the model's view (an output repair request), after the first `after` output items. */
  kernel_items: { after: number; item: Item }[];
  lease_token: number;
  cancel_requested_at: Date | null;
  deadline_at: Date | null;
  created_at: Date;
  completed_at: Date | null;
  /** When `status` last changed (kept by a trigger). */
  status_changed_at: Date;
  pending_calls: PendingCallRow[] | null;
}

const OWN_NAMES = `id project_id agent_id agent_revision_id session_id previous_response_id status input instructions metadata options background
  output usage error model_calls model_attempts step_usage tool_call_count repair_attempts kernel_items lease_token cancel_requested_at deadline_at
  created_at completed_at status_changed_at`.split(/\s+/);

/** The response's own columns, over `responses r`. */
const OWN_COLUMNS = OWN_NAMES.map((name) => `r.${name}`).join(', ');

const PENDING_CALLS = `(SELECT json_agg(json_build_object('call_id', c.call_id, 'name', c.name, 'arguments', c.arguments, 'risk', c.risk,
     'status', c.status, 'question', c.question, 'approval_deadline', c.approval_deadline, 'approval_display', c.approval_display) ORDER BY c.position)
   FROM tool_calls c WHERE c.response_id = r.id AND c.status IN ('awaiting_approval', 'awaiting_output', 'awaiting_input')) AS pending_calls`;

/** A ResponseRow's columns over `responses r`, `agents a` and `agent_revisions rev` (joined by RESPONSE_JOIN). */
export const RESPONSE_COLUMNS = `${OWN_COLUMNS}, a.name AS agent_name, rev.revision AS agent_revision, ${PENDING_CALLS}`;
export const RESPONSE_JOIN = 'a.id = r.agent_id AND rev.id = r.agent_revision_id';

/** A ResponseRow's columns by name over a CTE that returned RESPONSE_COLUMNS (never `alias.*`: statement-names.ts). */
export const responseColumnsOf = (alias: string): string =>
  [...OWN_NAMES, 'agent_name', 'agent_revision', 'pending_calls'].map((name) => `${alias}.${name}`).join(', ');

/**
 * The row a response was inserted as, from the INSERT's own RETURNING: the
 * agent's name and revision are the placeholders given, and nothing waits yet.
 */
export const INSERTED_RESPONSE_COLUMNS = (agentName: string, agentRevision: string) =>
  `${OWN_COLUMNS}, ${agentName}::text AS agent_name, ${agentRevision}::integer AS agent_revision, NULL::json AS pending_calls`;

const SELECT_RESPONSE = `SELECT ${RESPONSE_COLUMNS} FROM responses r JOIN agents a ON a.id = r.agent_id JOIN agent_revisions rev ON rev.id = r.agent_revision_id`;

/**
 * Updates one response of the project and answers with the row as it now is,
 * from the UPDATE's own RETURNING (no second read); null when `where` (over
 * `r`) matched nothing. The UPDATE holds the row lock to the end of the transaction.
 */
export async function updateResponse(
  tx: Queryable,
  projectId: string,
  responseId: string,
  update: { set: string; where?: string; params?: unknown[] },
): Promise<ResponseRow | null> {
  const { rows } = await tx.query<ResponseRow>(
    `UPDATE responses r SET ${update.set} FROM agents a, agent_revisions rev
     WHERE r.project_id = $1 AND r.id = $2 AND ${RESPONSE_JOIN}${update.where ? ` AND ${update.where}` : ''}
     RETURNING ${RESPONSE_COLUMNS}`,
    [projectId, responseId, ...(update.params ?? [])],
  );
  return rows[0] ?? null;
}

export async function findResponse(db: Queryable, projectId: string, responseId: string, forUpdate = false): Promise<ResponseRow | null> {
  const { rows } = await db.query<ResponseRow>(`${SELECT_RESPONSE} WHERE r.project_id = $1 AND r.id = $2${forUpdate ? ' FOR UPDATE OF r' : ''}`, [
    projectId,
    responseId,
  ]);
  return rows[0] ?? null;
}

/** Which responses a list returns; every field narrows it. */
export interface ResponseFilter {
  agentId?: string;
  sessionId?: string;
  /** One status, or any of several. */
  status?: ResponseStatus | readonly ResponseStatus[];
  /** Unix seconds, inclusive. */
  createdAfter?: number;
  createdBefore?: number;
  /** Unix seconds (fractions allowed): only responses whose status changed after it. */
  statusChangedAfter?: number;
}

/** The WHERE clause of a filter over the project's responses, and its parameters. */
function filterConditions(
  projectId: string,
  filter: ResponseFilter,
): { conditions: string[]; params: unknown[]; where: (sql: string, value: unknown) => void } {
  const conditions = ['r.project_id = $1'];
  const params: unknown[] = [projectId];
  const where = (sql: string, value: unknown) => {
    params.push(value);
    conditions.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.agentId !== undefined) where('r.agent_id = ?', filter.agentId);
  if (filter.sessionId !== undefined) where('r.session_id = ?', filter.sessionId);
  if (filter.status !== undefined) where('r.status = ANY(?::text[])', typeof filter.status === 'string' ? [filter.status] : [...filter.status]);
  if (filter.createdAfter !== undefined) where('r.created_at >= to_timestamp(?)', filter.createdAfter);
  if (filter.createdBefore !== undefined) where('r.created_at <= to_timestamp(?)', filter.createdBefore);
  if (filter.statusChangedAfter !== undefined) where('r.status_changed_at > to_timestamp(?)', filter.statusChangedAfter);
  return { conditions, params, where };
}

/** A page of the project's responses, newest first unless `order` is `asc`; the cursor is a response id. */
export async function listResponses(
  db: Queryable,
  projectId: string,
  filter: ResponseFilter,
  page: PageRequest & { order?: 'asc' | 'desc' },
): Promise<Page<ResponseRow>> {
  const { conditions, params, where } = filterConditions(projectId, filter);
  const ascending = page.order === 'asc';
  if (page.after !== undefined) where(ascending ? 'r.id > ?' : 'r.id < ?', page.after);
  params.push(fetchSize(page));
  const { rows } = await db.query<ResponseRow>(
    `${SELECT_RESPONSE} WHERE ${conditions.join(' AND ')} ORDER BY r.id ${ascending ? 'ASC' : 'DESC'} LIMIT $${params.length}`,
    params,
  );
  return toPage(rows, page, (row) => row);
}

/** How many of the project's responses match the filter. */
export async function countResponses(db: Queryable, projectId: string, filter: ResponseFilter): Promise<number> {
  const { conditions, params } = filterConditions(projectId, filter);
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM responses r WHERE ${conditions.join(' AND ')}`, params);
  return rows[0].n;
}

export async function requireResponse(db: Queryable, projectId: string, responseId: string, forUpdate = false): Promise<ResponseRow> {
  const row = await findResponse(db, projectId, responseId, forUpdate);
  if (!row) throw notFound('response', responseId);
  return row;
}

const WAITING_FOR = { awaiting_approval: 'approval', awaiting_output: 'tool_output', awaiting_input: 'input' } as const;

function pendingCalls(row: ResponseRow): PendingToolCall[] {
  return (row.pending_calls ?? []).map((c) => ({
    call_id: c.call_id,
    name: c.name,
    arguments: c.arguments,
    risk: c.risk,
    waiting_for: WAITING_FOR[c.status],
    ...(c.question !== null ? { question: c.question } : {}),
    ...(c.status === 'awaiting_approval' ? { approval_deadline: c.approval_deadline === null ? null : unixSeconds(c.approval_deadline) } : {}),
    ...(c.status === 'awaiting_approval' && c.approval_display ? { approval_display: c.approval_display } : {}),
  }));
}

export function responseState(row: ResponseRow): ResponseState {
  return {
    id: row.id,
    status: row.status,
    agent: { id: row.agent_id, name: row.agent_name, revision: row.agent_revision, revision_id: row.agent_revision_id },
    session_id: row.session_id,
    previous_response_id: row.previous_response_id,
    instructions: row.instructions,
    background: row.background,
    metadata: row.metadata,
    options: runOptionsOf(row.options),
    output: row.output,
    usage: row.usage,
    usage_by_step: row.step_usage,
    error: row.error,
    pending_calls: isWaiting(row.status) ? pendingCalls(row) : [],
    created_at: unixSeconds(row.created_at)!,
    completed_at: unixSeconds(row.completed_at),
    status_changed_at: unixSeconds(row.status_changed_at)!,
  };
}
