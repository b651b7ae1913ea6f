// The resources a fuzz run aims at: agents (one that answers, ones that wait for
// a tool output, an approval or an answer), a session, responses finished and
// waiting, model connections — and the hints that make valid-ish bodies name them.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { TestHub } from '../hub.js';
import { OMIT, type Hints } from './schema-values.js';
import type { World } from './requests.js';
import { newIdentity, proofFor } from '../../nodes/node-fixtures.js';

type Ctx = () => TestHub;

async function post(ctx: Ctx, path: string, body: unknown, status: number): Promise<any> {
  const res = await ctx()
    .http.post(path)
    .set(ctx().auth)
    .send(body as object);
  assert.equal(res.status, status, `${path}: ${res.text}`);
  return res.body;
}

const ECHO = { name: 'fuzz-echo', model: { provider: 'fake' } };
const WAITS_FOR_TOOL = {
  name: 'fuzz-tool',
  model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] }, { text: 'done' }] },
  tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
};
const WAITS_FOR_APPROVAL = {
  name: 'fuzz-approval',
  model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: 'done' }] },
  tools: [{ type: 'builtin', name: 'echo' }],
  approval: { tools: ['echo'] },
};
const WAITS_FOR_INPUT = {
  name: 'fuzz-input',
  model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which city?' } }] }, { text: 'ok' }] },
  tools: [{ type: 'builtin', name: 'ask_user' }],
};

/** JSON Schemas a tool's `parameters` or an agent's `output_schema` might really be. */
const jsonSchemas = fc.constantFrom(
  {},
  { type: 'object' },
  { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  { type: 'string' },
  { type: 'object', additionalProperties: false },
);

/**
 * A limit in seconds: left out, a day, the document's maximum (a PostgreSQL
 * integer's) or beyond it. Never a few seconds: a deadline that passes mid-fuzz
 * would write while another request is being checked for writing nothing.
 */
const seconds = fc.constantFrom(OMIT, 86_400, 2 ** 31 - 1, 2 ** 31, Number.MAX_SAFE_INTEGER);

/** Creates the resources and returns what the fuzzer needs to aim at them. */
export async function createWorld(ctx: Ctx, maxBodyBytes: number): Promise<World> {
  const agents = {
    echo: await post(ctx, '/v1/agents', ECHO, 201),
    tool: await post(ctx, '/v1/agents', WAITS_FOR_TOOL, 201),
    approval: await post(ctx, '/v1/agents', WAITS_FOR_APPROVAL, 201),
    input: await post(ctx, '/v1/agents', WAITS_FOR_INPUT, 201),
    scratch: await post(ctx, '/v1/agents', { name: 'fuzz-scratch', model: { provider: 'fake' } }, 201),
  };
  const connection = await post(ctx, '/v1/model_connections', { name: 'fuzz-conn', provider: 'openai', api_key_env: 'OPENAI_API_KEY' }, 201);
  const doomedConnection = await post(ctx, '/v1/model_connections', { name: 'fuzz-conn-doomed', provider: 'openai' }, 201);
  const session = await post(ctx, '/v1/sessions', { agent: agents.echo.name }, 201);
  const doomedSession = await post(ctx, '/v1/sessions', { agent: agents.echo.name }, 201);
  const completed = await post(ctx, '/v1/responses', { model: agents.echo.name, input: 'hello' }, 200);
  assert.equal(completed.status, 'completed');
  const waiting = async (agent: string, times: number) => {
    const out = [];
    for (let i = 0; i < times; i++) out.push(await post(ctx, '/v1/responses', { model: agent, input: `wait ${i}` }, 200));
    out.forEach((r) => assert.match(r.palai_status, /^waiting_for_/));
    return out;
  };
  const forTool = await waiting(agents.tool.name, 3);
  const forApproval = await waiting(agents.approval.name, 3);
  const forInput = await waiting(agents.input.name, 3);
  const callIds = [...forTool, ...forApproval, ...forInput].map((r) => r.required_action.calls[0].call_id as string);

  const { rows } = await ctx().hub.kernel.db.query<{ last: number }>('SELECT max(sequence)::int AS last FROM response_events WHERE response_id = $1', [
    completed.id,
  ]);
  const ids = (list: { id: string }[]) => list.map((r) => r.id);
  const names = [agents.echo.name, agents.echo.id, agents.tool.name, agents.approval.name, agents.input.name];

  const hints: Hints = {
    'CreateResponseRequest.model': fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.constant(OMIT) }),
    'CreateResponseRequest.session_id': fc.oneof({ weight: 3, arbitrary: fc.constant(OMIT) }, { weight: 1, arbitrary: fc.constant(session.id) }),
    'CreateResponseRequest.previous_response_id': fc.oneof(
      { weight: 3, arbitrary: fc.constant(OMIT) },
      { weight: 1, arbitrary: fc.constantFrom(completed.id, forTool[0].id, null) },
    ),
    // Renaming is refused; the path names the scratch agent.
    'UpdateAgentRequest.name': fc.constantFrom(OMIT, agents.scratch.name),
    'CreateSessionRequest.agent': fc.constantFrom(...names),
    // A script is for the fake provider only: mostly that one, so more specs are usable.
    'ModelSpec.provider': fc.oneof(
      { weight: 3, arbitrary: fc.constant('fake') },
      { weight: 1, arbitrary: fc.constantFrom('openai', 'openai-chat', 'anthropic') },
    ),
    'ModelSpec.connection': fc.oneof({ weight: 3, arbitrary: fc.constant(OMIT) }, { weight: 1, arbitrary: fc.constant(connection.name) }),
    'ModelSpec.base_url': fc.constantFrom(OMIT, 'http://127.0.0.1:9/v1', 'not a url'),
    'AgentSpecFields.output_schema': jsonSchemas,
    'FunctionToolSpec.parameters': jsonSchemas,
    'BuiltinToolSpec.name': fc.constantFrom('echo', 'current_time', 'ask_user', 'no_such_tool'),
    'FakeToolCallsStep.name': fc.constantFrom('echo', 'lookup', 'ask_user', 'current_time'),
    'AgentLimits.timeout_seconds': seconds,
    'ApprovalPolicy.timeout_seconds': seconds,
    'CreateModelConnectionRequest.api_key_env': fc.constantFrom(OMIT, 'OPENAI_API_KEY', 'HOME'),
    '*.delay_ms': fc.constantFrom(OMIT, 0),
    '*.call_id': fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...callIds) }, { weight: 1, arbitrary: fc.constant('call_unknown') }),
  };

  // Companion nodes: pending ones to approve, deny and revoke, one paired (`fuzz-box`) with an ended invocation.
  const nodes = ctx().hub.surfaces.slices.nodes;
  const enrollment = await post(ctx, '/v1/node_enrollments', { max_uses: 10 }, 201);
  const doomedEnrollment = await post(ctx, '/v1/node_enrollments', {}, 201);
  const pending = async () => {
    const identity = newIdentity();
    await nodes.nodeGateway.admit(proofFor(identity), enrollment.token);
    return identity.nodeId;
  };
  const [toApprove, toDeny, toRevoke, paired] = [await pending(), await pending(), await pending(), await pending()];
  await nodes.nodes.approve(ctx().projectId, paired, { allowed_commands: ['shell.exec.v1'], aliases: ['fuzz-box'] });
  const invocation = await nodes.nodeCalls.prepare(ctx().projectId, {
    responseId: completed.id,
    callId: 'call_fuzz_node',
    nodeId: paired,
    command: 'shell.exec.v1',
    input: { script: 'true' },
  });
  // Ended at once: an open one would be ended by the sweep (its response is over) while a request is being checked for writing nothing.
  await nodes.nodeInvocations.cancel(ctx().projectId, invocation.invocationId);
  hints['ApproveNodeRequest.allowed_commands'] = fc.constantFrom([], ['shell.exec.v1'], ['shell.exec.v1', 'system.exec.v1'], ['files.read.v1']);

  const anyResponse = [...ids(forTool), ...ids(forApproval), ...ids(forInput), completed.id];
  return {
    apiKey: ctx().apiKey,
    maxBodyBytes,
    hints,
    cursors: [agents.echo.id, session.id, connection.id, completed.id, paired, enrollment.id, invocation.invocationId],
    lastSequence: rows[0].last,
    pathValues: {
      getAgent: { agent: [agents.echo.name, agents.echo.id, agents.scratch.name] },
      listAgentRevisions: { agent: [agents.echo.name, agents.scratch.id] },
      updateAgent: { agent: [agents.scratch.name, agents.scratch.id] },
      getModelConnection: { connection: [connection.name, connection.id] },
      deleteModelConnection: { connection: [doomedConnection.name, doomedConnection.id] },
      getSession: { session_id: [session.id] },
      listSessionItems: { session_id: [session.id] },
      deleteSession: { session_id: [doomedSession.id] },
      getResponse: { response_id: [completed.id] },
      getResponseEvents: { response_id: [completed.id] },
      cancelResponse: { response_id: anyResponse },
      submitToolOutputs: { response_id: [...ids(forTool), completed.id] },
      decideApproval: { response_id: [...ids(forApproval), completed.id] },
      submitInput: { response_id: [...ids(forInput), completed.id] },
      revokeNodeEnrollment: { enrollment: [doomedEnrollment.id] },
      getNode: { node: [paired, 'fuzz-box', toApprove] },
      approveNode: { node: [toApprove, paired, 'fuzz-box'] },
      denyNode: { node: [toDeny, paired] },
      revokeNode: { node: [toRevoke] },
      listNodeInvocations: { node: [paired, 'fuzz-box'] },
      getNodeInvocation: { invocation: [invocation.invocationId] },
      cancelNodeInvocation: { invocation: [invocation.invocationId] },
    },
  };
}
