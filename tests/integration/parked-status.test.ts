// A response parked on an outside party, as every surface shows it. A tool that
// parks its call (a companion node's command, here a test tool) leaves the
// response `parked`: REST shows it in progress with nothing to answer; a
// synchronous POST, a stream and A2A's blocking send wait through it and end
// with the party's answer (or the call's timeout outcome), and MCP's tools/call
// too; a caller's tool
// outputs are refused; a cancel ends it at once; and no webhook announces it.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { canTransition, type ResponseStatus } from '../../core/response-status.js';
import { functionTools } from '../../core/tools/function-provider.js';
import { defaultTools } from '../../core/tools/default-tools.js';
import type { ResolvedTool, ToolCallContext, ToolOutcome, ToolProvider, ToolSpecEntry } from '../../core/tools/tool-port.js';
import { createAgent } from '../support/api.js';
import { describeEachStore, type TestHub } from '../support/hub.js';
import { parseSse } from '../support/sse.js';
import { until } from '../support/until.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { connect, listen } from '../mcp/mcp-client.js';

const LONG = 60_000;

/** Parks for `timeout_ms`; saves what the party needs to find the call first. */
async function parkCall(args: { timeout_ms?: number }, context: ToolCallContext): Promise<ToolOutcome> {
  await context.saveCheckpoint({ invocation: `inv-${context.callId}` });
  return { kind: 'park', timeoutMs: args.timeout_ms ?? LONG };
}

/** Serves `{type: 'function', name: 'park_call'}` as the parking tool, run by the hub; any other name as a client function. */
const parkingTools: ToolProvider<ToolSpecEntry> = {
  kind: 'function',
  async resolve(spec): Promise<ResolvedTool[]> {
    if (spec.name !== 'park_call') return functionTools.resolve(spec as Parameters<typeof functionTools.resolve>[0]);
    return [
      {
        name: 'park_call',
        kind: 'function',
        description: 'parks',
        parameters: { type: 'object', properties: {} },
        risk: 'read',
        validateArguments: false,
        run: parkCall,
      },
    ];
  },
};

const TIMEOUT_OUTPUT = JSON.stringify({ error: 'No answer came before the deadline.', timed_out: true });

/** Every output a response's items carry (function_call_output and hub-run calls alike). */
const outputsOf = (output: Array<{ output?: unknown }>) => output.flatMap((item) => (typeof item.output === 'string' ? [item.output] : []));

let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
});
after(async () => {
  await receiver?.close();
});

await describeEachStore(
  'a parked response on every surface',
  (ctx) => {
    let agents = 0;
    /** An agent whose first step calls park_call with `args`, then answers "done". */
    async function parker(args: Record<string, unknown> = {}): Promise<string> {
      const name = `parker-${++agents}`;
      const script = [{ tool_calls: [{ name: 'park_call', arguments: args }] }, { text: 'done' }];
      await createAgent(ctx, { name, model: { provider: 'fake', script }, tools: [{ type: 'function', name: 'park_call' }] });
      return name;
    }
    const hub = (): TestHub => ctx();
    const getResponse = async (id: string) => (await hub().http.get(`/v1/responses/${id}`).set(hub().auth)).body;

    /** The agent's one response once it is parked, with its parked call's id. */
    async function parkedOf(agent: string): Promise<{ id: string; callId: string }> {
      return until(`a response of ${agent} is parked`, async () => {
        const { rows } = await hub().hub.kernel.db.query<{ id: string; call_id: string }>(
          `SELECT r.id, t.call_id FROM responses r JOIN agents a ON a.id = r.agent_id JOIN tool_calls t ON t.response_id = r.id
           WHERE a.name = $1 AND r.status = 'parked' AND t.status = 'parked'`,
          [agent],
        );
        return rows[0] ? { id: rows[0].id, callId: rows[0].call_id } : null;
      });
    }
    const answer = (id: string, callId: string, output: string) => hub().hub.api.responses.answerParkedCall(hub().projectId, id, callId, { output });
    const statusesOf = async (id: string): Promise<ResponseStatus[]> =>
      (await hub().hub.api.responses.events(hub().projectId, id, -1)).flatMap(({ event }) => (event.type === 'status' ? [event.status] : []));

    test('REST shows a parked response in progress, with palai_status parked and nothing to answer', async () => {
      const agent = await parker();
      const admitted = await hub().http.post('/v1/responses').set(hub().auth).send({ model: agent, input: 'go', background: true });
      assert.equal(admitted.status, 200, admitted.text);
      const { id, callId } = await parkedOf(agent);
      assert.equal(id, admitted.body.id);
      const shown = await getResponse(id);
      assert.equal(shown.status, 'in_progress');
      assert.equal(shown.palai_status, 'parked');
      assert.equal(shown.required_action, null);
      await answer(id, callId, 'answered');
      const done = await until('it completes', async () => ((await getResponse(id)).palai_status === 'completed' ? getResponse(id) : null));
      assert.deepEqual(outputsOf(done.output), ['answered']);
    });

    test('a synchronous POST waits through parked and returns completed with the answer as the output', async () => {
      const agent = await parker();
      let answered = false;
      let returnedBeforeAnswer = false;
      const pending = hub()
        .http.post('/v1/responses')
        .set(hub().auth)
        .send({ model: agent, input: 'go' })
        .then((res) => {
          returnedBeforeAnswer = !answered;
          return res;
        });
      const { id, callId } = await parkedOf(agent);
      answered = true;
      await answer(id, callId, 'the party answered');
      const res = await pending;
      assert.equal(returnedBeforeAnswer, false, 'the POST did not return while the response was parked');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'completed');
      assert.equal(res.body.palai_status, 'completed');
      assert.deepEqual(outputsOf(res.body.output), ['the party answered']);
      const statuses = await statusesOf(id);
      assert.deepEqual(statuses, ['queued', 'in_progress', 'parked', 'in_progress', 'completed']);
      for (let i = 1; i < statuses.length; i++) assert.ok(canTransition(statuses[i - 1], statuses[i]), `${statuses[i - 1]} → ${statuses[i]}`);
    });

    test('Chat Completions waits through parked too', async () => {
      const agent = await parker();
      const pending = hub()
        .http.post('/v1/chat/completions')
        .set(hub().auth)
        .send({ model: agent, messages: [{ role: 'user', content: 'go' }] })
        .then((res) => res);
      const { id, callId } = await parkedOf(agent);
      await answer(id, callId, 'for the chat');
      const res = await pending;
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.choices[0].finish_reason, 'stop');
      assert.equal(res.body.choices[0].message.content, 'done');
    });

    test('a stream stays open through parked and ends completed, with no wait announced', async () => {
      const agent = await parker();
      const pending = hub()
        .http.post('/v1/responses')
        .set(hub().auth)
        .set('Palai-Events', 'extended')
        .send({ model: agent, input: 'go', stream: true })
        .then((res) => res);
      const { id, callId } = await parkedOf(agent);
      await answer(id, callId, 'streamed answer');
      const res = await pending;
      assert.equal(res.status, 200, res.text);
      const frames = parseSse(res.text);
      const types = frames.map((f) => f.event ?? f.data.type);
      assert.equal(types.at(-1), 'response.completed', types.join(', '));
      assert.equal(types.filter((t) => t === 'response.completed').length, 1);
      assert.ok(!types.some((t) => String(t).startsWith('response.waiting_for')), types.join(', '));
      const parked = frames.filter((f) => f.data?.response?.palai_status === 'parked');
      assert.ok(parked.length > 0, 'the parked status is shown');
      for (const frame of parked) {
        assert.equal(frame.data.type, 'response.in_progress');
        assert.equal(frame.data.response.status, 'in_progress');
      }
      assert.deepEqual(outputsOf(frames.at(-1)!.data.response.output), ['streamed answer']);
    });

    test('tool outputs for a parked response are 409 invalid-state; a cancel ends it canceled', async () => {
      const agent = await parker();
      await hub().http.post('/v1/responses').set(hub().auth).send({ model: agent, input: 'go', background: true });
      const { id, callId } = await parkedOf(agent);
      const refused = await hub()
        .http.post(`/v1/responses/${id}/tool_outputs`)
        .set(hub().auth)
        .send({ outputs: [{ call_id: callId, output: 'from the client' }] });
      assert.equal(refused.status, 409, refused.text);
      assert.match(refused.body.type, /invalid-state$/);
      assert.equal((await getResponse(id)).palai_status, 'parked', 'the refusal changed nothing');
      const canceled = await hub().http.post(`/v1/responses/${id}/cancel`).set(hub().auth).send({});
      assert.equal(canceled.status, 200, canceled.text);
      assert.equal(canceled.body.palai_status, 'canceled');
      assert.deepEqual(await statusesOf(id), ['queued', 'in_progress', 'parked', 'canceled']);
    });

    test('a parked call nobody answers gets its timeout outcome at its deadline, and the synchronous POST returns completed with it', async () => {
      const agent = await parker({ timeout_ms: 300 });
      const res = await hub().http.post('/v1/responses').set(hub().auth).send({ model: agent, input: 'go' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.palai_status, 'completed');
      assert.deepEqual(outputsOf(res.body.output), [TIMEOUT_OUTPUT]);
      assert.deepEqual(await statusesOf(res.body.id), ['queued', 'in_progress', 'parked', 'in_progress', 'completed']);
    });

    test("A2A's blocking SendMessage reports the parked task working, then returns it completed, never input-required", async () => {
      const agent = await parker();
      const rpc = (id: number, method: string, params: unknown) =>
        hub().http.post(`/a2a/${agent}/jsonrpc`).set(hub().auth).set('A2A-Version', '1.0').send({ jsonrpc: '2.0', id, method, params });
      const message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'go' }] };
      const pending = rpc(1, 'SendMessage', { message }).then((res) => res);
      const { id, callId } = await parkedOf(agent);
      const task = await rpc(2, 'GetTask', { id });
      assert.equal(task.body.result.status.state, 'TASK_STATE_WORKING', JSON.stringify(task.body));
      assert.equal(task.body.result.metadata.palai_status, 'parked');
      await answer(id, callId, 'for the agent');
      const sent = await pending;
      assert.equal(sent.body.result.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(sent.body));
    });

    test('MCP tools/call keeps waiting through parked and answers with the finished run', async () => {
      const agent = await parker();
      const server = await listen(hub().hub.app);
      const { client } = await connect(server.url, hub().apiKey);
      try {
        const pending = client.callTool({ name: agent, arguments: { input: 'go' } });
        const { id, callId } = await parkedOf(agent);
        await answer(id, callId, 'for the host');
        const result = await pending;
        assert.equal(result.isError, undefined, JSON.stringify(result));
        assert.deepEqual(result.content, [{ type: 'text', text: 'done' }]);
        assert.equal((result._meta as Record<string, unknown>)['palai/status'], 'completed');
      } finally {
        await client.close();
        await server.close();
      }
    });

    test('no webhook is delivered at parked: a subscriber to every event hears of the end only', async () => {
      const endpoint = await hub()
        .http.post('/v1/webhook_endpoints')
        .set(hub().auth)
        .send({ url: receiver.url, events: ['*'] });
      assert.equal(endpoint.status, 201, endpoint.text);
      const agent = await parker();
      const pending = hub()
        .http.post('/v1/responses')
        .set(hub().auth)
        .send({ model: agent, input: 'go' })
        .then((res) => res);
      const { id, callId } = await parkedOf(agent);
      await answer(id, callId, 'heard');
      assert.equal((await pending).body.palai_status, 'completed');
      const { rows } = await hub().hub.kernel.db.query<{ status: string }>(
        "SELECT payload->>'status' AS status FROM outbox_deliveries WHERE response_id = $1 ORDER BY event_sequence",
        [id],
      );
      assert.deepEqual(
        rows.map((r) => r.status),
        ['completed'],
      );
      await hub().http.delete(`/v1/webhook_endpoints/${endpoint.body.id}`).set(hub().auth);
    });
  },
  // Webhook endpoints keep their signing secrets sealed: the hub needs a key for them.
  { secretKey: 'parked-status-tests-secret-key-0123' },
  { tools: defaultTools().register(parkingTools) },
);
