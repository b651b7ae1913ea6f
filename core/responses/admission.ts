// Admission: the response, its input items (and session items), the session it
// makes (a new one, or the one an external key maps to) and its `queued` event
// commit in one transaction before any surface acknowledges; a NOTIFY in the
// same transaction wakes a worker. Every surface admits through one command
// (protocols/admission.schema.json), checked before anything is read.
import type { AdmissionOptions } from '../../generated/protocol-schemas.js';
import type { AgentSpecFields, Item, RequestFunctionTool, ResponseInputItem, Session } from '../../generated/schemas.js';
import { checkRecalledKey, liveKeySql, type RecalledKey } from '../auth/recalled-keys.js';
import { requireAgentForRun, type AgentForRun, type AgentRow } from '../agents/agents.js';
import { rememberedAgentHolds, type AgentMemory } from '../agents/recalled-agents.js';
import type { ConnectionRow } from '../models/connections.js';
import { reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import { PalaiError } from '../errors/palai-error.js';
import { newId } from '../ids.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import { sessionForKey } from '../sessions/session-keys.js';
import { appendSessionItems, bindSessionAgent, insertSession, removeSessionItems, requireSession } from '../sessions/sessions.js';
import type { Db, Queryable } from '../store/db.js';
import { isItemReference, resolveItemReferences } from './item-references.js';
import { openToolCalls, type ToolCallRow } from '../tools/tool-calls.js';
import { answerWaiting, type WaitAnswer } from './actions.js';
import { answerTarget, type AnswerTarget } from './answer-target.js';
import { effectiveSpec } from '../agents/effective-spec.js';
import { assertAdmissionCommand, BUILTIN_ENTRY_CHECK, type AdmissionCommand, type ToolEntryCheck } from './admission-command.js';
import { statusAppend } from './status-writer.js';
import { normalizeInput } from './items.js';
import { INSERTED_RESPONSE_COLUMNS, responseColumnsOf, responseState, type ResponseRow, type StoredRunOptions } from './responses.js';
import { freshStatusEvent, statusEventOf } from '../journal/journal-rows.js';
import { verifyAppend } from '../journal/journal.js';
import { SqlParams } from '../store/sql-params.js';

export type { AdmissionCommand, ToolEntryCheck };

/**
 * Admission in a transaction of its own. `tools` checks the tool entries the
 * command adds (`options.tool_entries`): the kernel's tool registry; without
 * it only built-ins are checked, the others when the run resolves them.
 * `agents`: the agents this process remembers, which the insert checks
 * instead of reading the agent first (agents/recalled-agents.ts).
 */
export async function admitResponse(
  db: Db,
  projectId: string,
  command: AdmissionCommand,
  idem?: IdempotencyClaim,
  tools: ToolEntryCheck = BUILTIN_ENTRY_CHECK,
  key?: RecalledKey,
  agents?: AgentMemory,
): Promise<ResponseRow> {
  return withinAdmission(db, command, idem, async (q) => (await admit(q, projectId, command, tools, idem, undefined, key, agents)).row);
}

/**
 * Runs an admission in one transaction, or without one when the command can
 * write only one statement: no idempotency key to reserve, no session to make,
 * bind or add to, and nothing it could answer (no previous response, no call
 * outputs). Its reads are then what they would be inside a transaction (read
 * committed: each statement sees what had committed when it began), and its one
 * write commits alone — no BEGIN and COMMIT round trips for the common case.
 */
export function withinAdmission<T>(db: Db, command: AdmissionCommand, idem: IdempotencyClaim | undefined, work: (q: Queryable) => Promise<T>): Promise<T> {
  return writesOnce(command, idem) ? work(db) : db.transaction(work);
}

/** Decided before the command is checked (admit checks it), so it holds for any value: anything unexpected takes the transaction. */
function writesOnce(command: AdmissionCommand, idem: IdempotencyClaim | undefined): boolean {
  const unchecked = command as Partial<AdmissionCommand> | null;
  if (idem || typeof unchecked !== 'object' || unchecked === null || !Array.isArray(unchecked.input)) return false;
  const answersNothing = (unchecked.input as unknown[]).every(
    (item) => typeof item === 'object' && item !== null && (item as { type?: unknown }).type !== 'function_call_output',
  );
  return unchecked.session === undefined && unchecked.previous_response_id === undefined && answersNothing;
}

/** The worker that takes a new response in the admitting transaction, and for how long its first lease holds. */
export interface ClaimOnAdmission {
  workerId: string;
  leaseSeconds: number;
}

/**
 * What an admission made: a new response, with its agent's spec and the model
 * connection that spec names as admission read it (null: none), or the waiting
 * response it answered.
 */
export type Admitted = { kind: 'new'; row: ResponseRow; spec: AgentSpecFields; connection: ConnectionRow | null } | { kind: 'answered'; row: ResponseRow };

/**
 * Admission inside the caller's transaction, for kernel modules that commit
 * more with the response (a queue job's record and its result subscription);
 * `tools` as for admitResponse.
 */
export async function admitWithin(
  tx: Queryable,
  projectId: string,
  command: AdmissionCommand,
  idem?: IdempotencyClaim,
  tools: ToolEntryCheck = BUILTIN_ENTRY_CHECK,
): Promise<ResponseRow> {
  return (await admit(tx, projectId, command, tools, idem)).row;
}

/**
 * Admission and claim in one transaction (the sync fast path): a new response
 * is inserted already taken by `claim` (in progress, under its first lease, as
 * a claim would leave it: one row version, not two); both its status events
 * (queued, in_progress) are journaled by one statement, and no worker is woken.
 * An answer to a waiting response resumes that one as ever (the workers take it up).
 */
export function admitClaimed(
  tx: Queryable,
  projectId: string,
  command: AdmissionCommand,
  idem: IdempotencyClaim | undefined,
  claim: ClaimOnAdmission,
  tools: ToolEntryCheck,
  key?: RecalledKey,
  agents?: AgentMemory,
): Promise<Admitted> {
  return admit(tx, projectId, command, tools, idem, claim, key, agents);
}

/**
 * Whether the agent's read is the admission's first statement, so that it can
 * check a recalled key too; else the key is checked alone before anything.
 */
export function readsAgentFirst(command: AdmissionCommand, idem: IdempotencyClaim | undefined): boolean {
  return writesOnce(command, idem) && !(command.options?.tool_entries?.length ?? 0);
}

async function admit(
  tx: Queryable,
  projectId: string,
  command: AdmissionCommand,
  tools: ToolEntryCheck,
  idem?: IdempotencyClaim,
  claim?: ClaimOnAdmission,
  key?: RecalledKey,
  agents?: AgentMemory,
): Promise<Admitted> {
  const agentFirst = readsAgentFirst(command, idem);
  if (key && !agentFirst) await checkRecalledKey(tx, key);
  await assertAdmissionCommand(command, tools);
  // Locked: answering it and a concurrent cancel or answer must not both apply.
  const target = await answerTarget(tx, projectId, command, true);
  if (target) return { kind: 'answered', row: await answerFromCommand(tx, projectId, target, command, idem) };
  const id = newId('resp');
  // First, so a concurrent duplicate waits here and then replays this response.
  await reserveKey(tx, projectId, idem, id);
  // The ref an agent is remembered by: only where its read would be the first statement.
  const ref = agentFirst ? command.agent : undefined;
  // A remembered agent is checked by the insert itself (agents/recalled-agents.ts), when nothing is read before it.
  const remembered = ref !== undefined && !referencesItems(command.input) ? agents?.recall(projectId, ref) : undefined;
  if (remembered && agents && ref !== undefined) {
    const admitted = await insertAdmitted(tx, projectId, id, command, normalizeInput(command.input), remembered, null, claim, key, true);
    if (admitted) return admitted;
    agents.forget(projectId, ref);
  }
  const { agent, sessionId } = await runContext(tx, projectId, command, key);
  if (ref !== undefined) agents?.remember(projectId, ref, agent);
  const input = normalizeInput(await resolveItemReferences(tx, projectId, command.input));
  return (await insertAdmitted(tx, projectId, id, command, input, agent, sessionId, claim, key, false))!;
}

const referencesItems = (input: AdmissionCommand['input']): boolean => typeof input !== 'string' && input.some(isItemReference);

/**
 * Inserts the new response of `agent` and journals the states it starts in.
 * With `remembered`, `agent` is as this process last read it, and the insert
 * checks it (and a recalled key not checked yet) in its own snapshot: null,
 * with nothing written, when either changed or the remembered spec refuses the
 * command; the caller then reads the agent and admits again.
 */
async function insertAdmitted(
  tx: Queryable,
  projectId: string,
  id: string,
  command: AdmissionCommand,
  input: Item[],
  agent: AgentForRun,
  sessionId: string | null,
  claim: ClaimOnAdmission | undefined,
  key: RecalledKey | undefined,
  remembered: boolean,
): Promise<Admitted | null> {
  let options: StoredRunOptions;
  try {
    options = runOptions(command.options ?? {}, agent.spec);
  } catch (error) {
    // Refused by the spec as remembered: whether the agent's current spec refuses it too, and the key, are for a fresh read to say.
    if (remembered) return null;
    throw error;
  }
  // What the run starts from: the agent's spec under the limits the command narrows it to (its timeout sets the deadline).
  const spec = effectiveSpec(agent.spec, options);
  const timeout = spec.limits?.timeout_seconds ?? null;
  // Claimed here, it is inserted as the claim would leave it (responses/lease-writes.ts's claimSet): lease token 1.
  // One statement inserts it, takes its first sequences and journals the states it starts in: queued, and in_progress when claimed.
  const p = new SqlParams();
  for (const value of [
    id,
    projectId,
    agent.id,
    agent.revision_id,
    sessionId,
    command.previous_response_id ?? null,
    JSON.stringify(input),
    command.instructions ?? null,
    JSON.stringify(command.metadata ?? {}),
    JSON.stringify(options),
    command.background === true,
    timeout,
    agent.name,
    agent.current_revision,
    claim?.workerId ?? null,
    claim?.leaseSeconds ?? null,
  ])
    p.add(value);
  const checksKey = remembered && key !== undefined && !key.checked;
  const holds = remembered
    ? `WHERE ${rememberedAgentHolds(p, '$2', agent)}${checksKey ? ` AND ${liveKeySql(p.add(key.hashToCheck(), 'text'), '$2')} = ${p.add(key.keyId, 'text')}` : ''}`
    : '';
  // A SELECT, not VALUES, so that a remembered agent's check can stop it; so each value is cast to its column's type.
  const take = (count: string) => `INSERT INTO responses AS r (id, project_id, agent_id, agent_revision_id, session_id, previous_response_id, status,
       input, instructions, metadata, options, background, deadline_at, lease_owner, lease_token, lease_expires_at, next_sequence)
     SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, CASE WHEN $15::text IS NULL THEN 'queued' ELSE 'in_progress' END,
       $7::jsonb, $8::text, $9::jsonb, $10::jsonb, $11::boolean,
       CASE WHEN $12::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $12::integer) END,
       $15::text, CASE WHEN $15::text IS NULL THEN 0 ELSE 1 END,
       CASE WHEN $15::text IS NULL THEN NULL ELSE now() + make_interval(secs => $16::integer) END, ${count}
     ${holds}
     RETURNING ${INSERTED_RESPONSE_COLUMNS('$13', '$14')}, r.next_sequence - ${count} AS first`;
  const statuses = claim ? (['queued', 'in_progress'] as const) : (['queued'] as const);
  const writer = { projectId, responseId: id, leaseToken: null };
  // Nobody has the id yet, so nobody follows the journal; only the workers need waking, unless it is claimed here.
  const { ctes, terms } = statusAppend(p, writer, statuses.map(freshStatusEvent), statuses, {
    take,
    wake: false,
    notify: claim ? [] : [[WORK_CHANNEL, id]],
  });
  const { rows } = await tx.query<ResponseRow & { first: number }>(`WITH ${ctes} SELECT ${responseColumnsOf('next')}, next.first${terms} FROM next`, p.values);
  if (rows.length === 0) return null;
  // The insert found the key live in the project (the condition above names this key's id).
  if (checksKey) key.settle(key.keyId);
  const { first, ...inserted } = rows[0];
  // The states it passed through: queued, before the claim (same statement, so the same timestamps).
  await verifyAppend(tx, id, first, () =>
    (claim ? [{ ...inserted, status: 'queued' as const, lease_token: 0 }, inserted] : [inserted]).map((row) => statusEventOf(responseState(row))),
  );
  if (sessionId) await appendSessionItems(tx, projectId, sessionId, id, input);
  return { kind: 'new', row: inserted, spec, connection: agent.connection };
}

/**
 * The agent that runs (looked up once, with its model connection) and the session it runs in. An existing
 * session is locked: its first response binds it, and a concurrent one must see
 * that. A new session, or the first for a key, is made here, so it commits (or
 * rolls back) with the response.
 */
async function runContext(
  tx: Queryable,
  projectId: string,
  command: AdmissionCommand,
  key?: RecalledKey,
): Promise<{ agent: AgentForRun; sessionId: string | null }> {
  const { session } = command;
  if (session?.kind === 'id') {
    const existing = await requireSession(tx, projectId, session.id, true);
    const agentRef = command.agent ?? existing.agent_id;
    if (!agentRef) {
      throw new PalaiError('invalid-request', `Session ${existing.id} has no agent yet; its first response must name one.`, {
        errors: [{ pointer: '/agent', detail: 'is required for the first response of this session' }],
      });
    }
    const agent = await requireAgentForRun(tx, projectId, agentRef);
    await bindSession(tx, existing, agent);
    return { agent, sessionId: existing.id };
  }
  if (command.agent === undefined) {
    throw new PalaiError('invalid-request', 'The run names no agent, and no session bound to one.', {
      errors: [{ pointer: '/agent', detail: 'is required without a session bound to an agent' }],
    });
  }
  const agent = await requireAgentForRun(tx, projectId, command.agent, key);
  switch (session?.kind) {
    case undefined:
      return { agent, sessionId: null };
    case 'new': {
      const sessionId = newId('ses');
      await insertSession(tx, projectId, sessionId, agent.id);
      return { agent, sessionId };
    }
    case 'key': {
      const sessionId = await sessionForKey(tx, projectId, session.source, session.key, agent.id);
      await bindSession(tx, await requireSession(tx, projectId, sessionId, true), agent);
      return { agent, sessionId };
    }
    default: {
      const unknown: never = session;
      throw new Error(`unknown session kind ${JSON.stringify(unknown)}`);
    }
  }
}

/** The first response of an unbound session binds it to its agent; every later one must be a run of that agent. */
async function bindSession(tx: Queryable, session: Session, agent: AgentRow): Promise<void> {
  if (session.agent_id === null) return bindSessionAgent(tx, session.id, agent.id);
  if (agent.id !== session.agent_id) {
    throw new PalaiError('invalid-request', `Session ${session.id} belongs to agent "${session.agent}".`, {
      errors: [{ pointer: '/agent', detail: `must name the session's agent "${session.agent}"` }],
    });
  }
}

/**
 * What the command asks of this run beyond the agent's spec, as stored; what it
 * leaves out leaves the agent's. An empty `allowed_tools` is kept (no tools at
 * all); empty `limits` and `tool_entries` ask nothing.
 */
function runOptions(options: AdmissionOptions, spec: AgentSpecFields): StoredRunOptions {
  const { tools: _tools, text_format, limits, tool_entries, ...knobs } = options;
  const tools = requestTools(options.tools ?? [], spec);
  const stored: StoredRunOptions = {
    ...knobs,
    ...(tools.length > 0 ? { tools } : {}),
    ...(text_format && text_format.type !== 'text' ? { text_format } : {}),
    ...(limits && Object.keys(limits).length > 0 ? { limits } : {}),
    ...(tool_entries && tool_entries.length > 0 ? { tool_entries } : {}),
  };
  if (typeof options.tool_choice === 'object') checkChosenTool(options.tool_choice.name, stored, spec);
  return stored;
}

/** The run's own client functions, each named once and none named like one of the agent's tools. */
function requestTools(offered: RequestFunctionTool[], spec: AgentSpecFields): RequestFunctionTool[] {
  const agentNames = new Set((spec.tools ?? []).flatMap((tool) => ('name' in tool && typeof tool.name === 'string' ? [tool.name] : [])));
  const seen = new Set<string>();
  return offered.map((tool, index) => {
    const pointer = `/options/tools/${index}/name`;
    if (seen.has(tool.name) || agentNames.has(tool.name)) {
      const detail = seen.has(tool.name) ? 'names a tool twice' : "is the name of one of the agent's own tools";
      throw new PalaiError('validation-failed', `Tool ${JSON.stringify(tool.name)} ${detail}.`, { errors: [{ pointer, detail }] });
    }
    seen.add(tool.name);
    const { type, name, description, parameters, strict } = tool;
    return {
      type,
      name,
      ...(description != null ? { description } : {}),
      ...(parameters != null ? { parameters } : {}),
      ...(strict != null ? { strict } : {}),
    };
  });
}

/**
 * A forced tool must be one the run offers, and one `allowed_tools` leaves it;
 * tools only a provider (MCP) can name are checked when the run starts.
 */
function checkChosenTool(name: string, options: StoredRunOptions, spec: AgentSpecFields): void {
  const entries = [...(spec.tools ?? []), ...(options.tool_entries ?? [])];
  const named = entries.every((tool) => tool.type === 'function' || tool.type === 'builtin');
  const known = (options.tools ?? []).some((tool) => tool.name === name) || entries.some((tool) => 'name' in tool && tool.name === name);
  const detail =
    options.allowed_tools !== undefined && !options.allowed_tools.includes(name)
      ? 'is not one of allowed_tools'
      : named && !known
        ? "is not one of the agent's tools or the request's"
        : null;
  if (detail !== null) {
    throw new PalaiError('validation-failed', `tool_choice names ${JSON.stringify(name)}, which is not a tool of this run.`, {
      errors: [{ pointer: '/options/tool_choice/name', detail }],
    });
  }
}

/**
 * What the input of a command continuing from a waiting response answers:
 * `function_call_output` items answer client tool calls (or, naming a question's
 * call, the question), `mcp_approval_response` items decide approvals, user
 * messages answer the question. Anything else has no place in an answer.
 */
function answersIn(input: ResponseInputItem[], calls: ToolCallRow[]): WaitAnswer[] {
  const questionIds = new Set(calls.filter((c) => c.status === 'awaiting_input').map((c) => c.call_id));
  return input.map((item, index): WaitAnswer => {
    const pointer = `/input/${index}`;
    if (item.type === 'mcp_approval_response') {
      const { approval_request_id: call_id, approve, reason } = item;
      return { kind: 'decision', call_id, decision: approve ? 'approve' : 'deny', reason: reason ?? null, pointer };
    }
    if (item.type === 'function_call_output') {
      if (questionIds.has(item.call_id)) return { kind: 'input', call_id: item.call_id, text: item.output, pointer };
      return { kind: 'output', call_id: item.call_id, output: item.output, pointer };
    }
    if ('role' in item && item.role === 'user') {
      return { kind: 'input', text: typeof item.content === 'string' ? item.content : item.content.map((p) => p.text).join(''), pointer };
    }
    throw new PalaiError('invalid-request', 'A response that waits takes only answers: function_call_output, mcp_approval_response items or a user message.', {
      errors: [{ pointer, detail: 'answers nothing the response waits for' }],
    });
  });
}

/**
 * Continuing from a response that waits answers it (OpenAI's way of sending
 * function outputs and approval responses): the same durable run resumes, and
 * no new response is made. The command must not name another agent or session.
 */
async function answerFromCommand(
  tx: Queryable,
  projectId: string,
  target: AnswerTarget,
  command: AdmissionCommand,
  idem?: IdempotencyClaim,
): Promise<ResponseRow> {
  const { row: previous } = target;
  if (command.agent !== undefined && command.agent !== previous.agent_id && command.agent !== previous.agent_name) {
    throw new PalaiError('invalid-request', `Response ${previous.id} is a run of agent "${previous.agent_name}"; answering it cannot name another.`, {
      errors: [{ pointer: '/agent', detail: `must name agent "${previous.agent_name}" or be left out` }],
    });
  }
  const { session } = command;
  if (session !== undefined && (session.kind !== 'id' || session.id !== previous.session_id)) {
    const named = session.kind === 'id' ? `session ${session.id}` : `a ${session.kind === 'new' ? 'new' : 'keyed'} session`;
    throw new PalaiError('invalid-request', `Response ${previous.id} is not in ${named}.`, {
      errors: [{ pointer: '/session', detail: "is not the waiting response's session" }],
    });
  }
  if (target.answers.length === 0) {
    throw new PalaiError('invalid-request', `Response ${previous.id} waits for an answer; the input holds none.`, {
      errors: [{ pointer: '/input', detail: 'is empty' }],
    });
  }
  const answered = await answerWaiting(tx, projectId, previous.id, answersIn(target.answers, await openToolCalls(tx, previous.id)), idem);
  if (previous.session_id) await removeSessionItems(tx, previous.session_id, target.sessionItemIds);
  return answered;
}
