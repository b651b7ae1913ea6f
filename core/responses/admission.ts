// Admission: the response, its input items (and session items) and its
// `response.created` event commit in one transaction before any surface
// acknowledges; a NOTIFY in the same transaction wakes a worker.
import type { AgentSpecFields, CreateResponseRequest, RequestFunctionTool } from '../../generated/schemas.js';
import { requireAgent } from '../agents/agents.js';
import { reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import { PalaiError } from '../errors/palai-error.js';
import { newId } from '../ids.js';
import { WORK_CHANNEL } from '../journal/wakeups.js';
import { appendSessionItems, bindSessionAgent, requireSession } from '../sessions/sessions.js';
import type { Db, Queryable } from '../store/db.js';
import { openToolCalls, type ToolCallRow } from '../tools/tool-calls.js';
import { answerWaiting, type WaitAnswer } from './actions.js';
import { journalStatuses } from './status-writer.js';
import { isWaiting } from '../response-status.js';
import { normalizeInput } from './items.js';
import { INSERTED_RESPONSE_COLUMNS, requireResponse, type ResponseRow, type StoredRunOptions } from './responses.js';

export async function admitResponse(db: Db, projectId: string, request: CreateResponseRequest, idem?: IdempotencyClaim): Promise<ResponseRow> {
  return db.transaction((tx) => admitWithin(tx, projectId, request, idem));
}

/** The worker that takes a new response in the admitting transaction, and for how long its first lease holds. */
export interface ClaimOnAdmission {
  workerId: string;
  leaseSeconds: number;
}

/** What an admission made: a new response (with its agent's spec), or the waiting response it answered. */
export type Admitted = { kind: 'new'; row: ResponseRow; spec: AgentSpecFields } | { kind: 'answered'; row: ResponseRow };

/**
 * Admission inside the caller's transaction, for kernel modules that commit
 * more with the response (a queue job's record and its result subscription).
 */
export async function admitWithin(tx: Queryable, projectId: string, request: CreateResponseRequest, idem?: IdempotencyClaim): Promise<ResponseRow> {
  return (await admit(tx, projectId, request, idem)).row;
}

/**
 * Admission and claim in one transaction (the sync fast path): a new response
 * is inserted already taken by `claim` (in progress, under its first lease, as
 * a claim would leave it: one row version, not two); both its status events
 * (queued, in_progress) are journaled by one statement, and no worker is woken.
 * An answer to a waiting response resumes that one as ever (the workers take it up).
 */
export function admitClaimed(tx: Queryable, projectId: string, request: CreateResponseRequest, idem: IdempotencyClaim | undefined, claim: ClaimOnAdmission): Promise<Admitted> {
  return admit(tx, projectId, request, idem, claim);
}

async function admit(tx: Queryable, projectId: string, request: CreateResponseRequest, idem?: IdempotencyClaim, claim?: ClaimOnAdmission): Promise<Admitted> {
  // Locked: answering it and a concurrent cancel or answer must not both apply.
  const previous = request.previous_response_id ? await requireResponse(tx, projectId, request.previous_response_id, true) : null;
  if (previous && isWaiting(previous.status)) return { kind: 'answered', row: await answerFromRequest(tx, projectId, previous, request, idem) };
  const id = newId('resp');
  // First, so a concurrent duplicate waits here and then replays this response.
  await reserveKey(tx, projectId, idem, id);
  // Locked: the first response of an unbound session binds it, and a concurrent one must see that.
  const session = request.session_id ? await requireSession(tx, projectId, request.session_id, true) : null;
  const agentRef = request.model ?? session?.agent_id;
  if (!agentRef) {
    throw new PalaiError('invalid-request', `Session ${session!.id} has no agent yet; name one as model.`, { errors: [{ pointer: '/model', detail: 'is required for the first response of this session' }] });
  }
  const agent = await requireAgent(tx, projectId, agentRef);
  if (session && session.agent_id === null) await bindSessionAgent(tx, session.id, agent.id);
  else if (session && agent.id !== session.agent_id) {
    throw new PalaiError('invalid-request', `Session ${session.id} belongs to agent "${session.agent}".`, {
      errors: [{ pointer: '/model', detail: `must name the session's agent "${session.agent}"` }],
    });
  }
  const input = normalizeInput(request.input);
  const timeout = agent.spec.limits?.timeout_seconds ?? null;
  // Claimed here, it is inserted as the claim would leave it (runner/claim.ts's claimSet): lease token 1.
  const { rows } = await tx.query<ResponseRow>(
    `INSERT INTO responses AS r (id, project_id, agent_id, agent_revision_id, session_id, previous_response_id, status,
       input, instructions, metadata, options, background, deadline_at, lease_owner, lease_token, lease_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $15::text IS NULL THEN 'queued' ELSE 'in_progress' END, $7, $8, $9, $10, $11,
       CASE WHEN $12::integer IS NULL THEN NULL ELSE now() + make_interval(secs => $12::integer) END,
       $15::text, CASE WHEN $15::text IS NULL THEN 0 ELSE 1 END,
       CASE WHEN $15::text IS NULL THEN NULL ELSE now() + make_interval(secs => $16::integer) END)
     RETURNING ${INSERTED_RESPONSE_COLUMNS('$13', '$14')}`,
    [
      id,
      projectId,
      agent.id,
      agent.revision_id,
      session?.id ?? null,
      request.previous_response_id ?? null,
      JSON.stringify(input),
      request.instructions ?? null,
      JSON.stringify(request.metadata ?? {}),
      JSON.stringify(runOptions(request, agent.spec)),
      request.background === true,
      timeout,
      agent.name,
      agent.current_revision,
      claim?.workerId ?? null,
      claim?.leaseSeconds ?? null,
    ],
  );
  const inserted = rows[0];
  if (session) await appendSessionItems(tx, projectId, session.id, id, input);
  const writer = { projectId, responseId: id, leaseToken: null };
  // Nobody has the id yet, so nobody follows the journal; only the workers need waking, unless it is claimed here.
  if (!claim) {
    await journalStatuses(tx, writer, [inserted], { wake: false, notify: [[WORK_CHANNEL, id]] });
    return { kind: 'new', row: inserted, spec: agent.spec };
  }
  // The state it passed through: queued, before the claim (same transaction, so the same timestamps).
  const queued: ResponseRow = { ...inserted, status: 'queued', lease_token: 0 };
  await journalStatuses(tx, writer, [queued, inserted], { wake: false });
  return { kind: 'new', row: inserted, spec: agent.spec };
}

/** What the request asks of this run beyond the agent's spec; absent values leave the agent's. */
function runOptions(request: CreateResponseRequest, spec: AgentSpecFields): StoredRunOptions {
  const { temperature, max_output_tokens, user, top_p, parallel_tool_calls, tool_choice } = request;
  const tools = requestTools(request, spec);
  if (tool_choice != null && typeof tool_choice === 'object') checkChosenTool(tool_choice.name, tools, spec);
  const format = request.text?.format;
  return {
    ...(temperature != null ? { temperature } : {}),
    ...(max_output_tokens != null ? { max_output_tokens } : {}),
    ...(user != null ? { user } : {}),
    ...(top_p != null ? { top_p } : {}),
    ...(parallel_tool_calls != null ? { parallel_tool_calls } : {}),
    ...(tool_choice != null ? { tool_choice } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(format && format.type !== 'text' ? { text_format: format } : {}),
  };
}

/** The request's own client functions, each named once and none named like one of the agent's tools. */
function requestTools(request: CreateResponseRequest, spec: AgentSpecFields): RequestFunctionTool[] {
  const agentNames = new Set((spec.tools ?? []).flatMap((tool) => ('name' in tool && typeof tool.name === 'string' ? [tool.name] : [])));
  const seen = new Set<string>();
  return (request.tools ?? []).map((tool, index) => {
    const pointer = `/tools/${index}/name`;
    if (seen.has(tool.name) || agentNames.has(tool.name)) {
      const detail = seen.has(tool.name) ? 'names a tool twice' : 'is the name of one of the agent\'s own tools';
      throw new PalaiError('validation-failed', `Tool ${JSON.stringify(tool.name)} ${detail}.`, { errors: [{ pointer, detail }] });
    }
    seen.add(tool.name);
    const { type, name, description, parameters, strict } = tool;
    return { type, name, ...(description != null ? { description } : {}), ...(parameters != null ? { parameters } : {}), ...(strict != null ? { strict } : {}) };
  });
}

/** A forced tool must be one the run offers; tools only a provider (MCP) can name are checked when the run starts. */
function checkChosenTool(name: string, tools: RequestFunctionTool[], spec: AgentSpecFields): void {
  const specTools = spec.tools ?? [];
  const named = specTools.every((tool) => tool.type === 'function' || tool.type === 'builtin');
  const known = tools.some((tool) => tool.name === name) || specTools.some((tool) => 'name' in tool && tool.name === name);
  if (named && !known) {
    throw new PalaiError('validation-failed', `tool_choice names ${JSON.stringify(name)}, which is not a tool of this run.`, {
      errors: [{ pointer: '/tool_choice/name', detail: 'is not one of the agent\'s tools or the request\'s' }],
    });
  }
}

/**
 * What the input of a request continuing from a waiting response answers:
 * `function_call_output` items answer client tool calls (or, naming a question's
 * call, the question), `mcp_approval_response` items decide approvals, user
 * messages answer the question. Anything else has no place in an answer.
 */
function answersIn(input: CreateResponseRequest['input'], calls: ToolCallRow[]): WaitAnswer[] {
  if (typeof input === 'string') return [{ kind: 'input', text: input, pointer: '/input' }];
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
 * no new response is made. The request must not name another agent or session.
 */
async function answerFromRequest(tx: Queryable, projectId: string, previous: ResponseRow, request: CreateResponseRequest, idem?: IdempotencyClaim): Promise<ResponseRow> {
  if (request.model !== undefined && request.model !== previous.agent_id && request.model !== previous.agent_name) {
    throw new PalaiError('invalid-request', `Response ${previous.id} is a run of agent "${previous.agent_name}"; answering it cannot name another.`, {
      errors: [{ pointer: '/model', detail: `must name agent "${previous.agent_name}" or be left out` }],
    });
  }
  if (request.session_id !== undefined && request.session_id !== previous.session_id) {
    throw new PalaiError('invalid-request', `Response ${previous.id} is not in session ${request.session_id}.`, { errors: [{ pointer: '/session_id', detail: 'is not the waiting response\'s session' }] });
  }
  const answers = answersIn(request.input, await openToolCalls(tx, previous.id));
  return answerWaiting(tx, projectId, previous.id, answers, idem);
}
