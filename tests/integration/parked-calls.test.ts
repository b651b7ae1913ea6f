// Parked tool calls, as a specification: a tool that waits for an outside party
// parks its call and frees its worker's slot (a second response runs on a
// worker of concurrency 1); the party's answer, through the kernel API under
// the inbox, is the call's output and the run goes on with it; the same answer
// again replays, another one is refused; a call nobody answers gets its timeout
// outcome at its deadline, and an answer after the deadline is refused, whether
// or not the timeout was committed yet; an answer that comes while the tool
// still runs ends the call when it parks; a hub stopped while a call is parked
// loses nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeModel } from '../../adapters/models/fake/fake-model.js';
import { startHub, type Hub, type Role } from '../../cli/hub.js';
import { declareInboxSource, type KernelApi, type ResponseState } from '../../core/api/index.js';
import { createProject } from '../../core/auth/projects.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { createLogger } from '../../core/logger.js';
import type { Db } from '../../core/store/db.js';
import { ModelRegistry, type ModelAdapter } from '../../core/models/model-port.js';
import { functionTools } from '../../core/tools/function-provider.js';
import { ToolRegistry } from '../../core/tools/tool-registry.js';
import type { ResolvedTool, ToolCallContext, ToolOutcome, ToolProvider, ToolSpecEntry } from '../../core/tools/tool-port.js';
import { testConfig } from '../support/hub.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';
import { until, untilStorePasses } from '../support/until.js';

const LONG = 60_000;
/** The outside party's own source of answers, declared as its wing would. */
const PARTY_SOURCE = declareInboxSource('parked-test', 'answer id');

/** Every tool output a model call was shown, across the suite: what "the model saw". */
const seenOutputs: string[] = [];
const fake = new FakeModel();
const recordingModel: ModelAdapter = {
  provider: 'fake',
  coalesceDeltas: false,
  stream(request) {
    for (const item of request.items) if (item.type === 'function_call_output') seenOutputs.push(item.output);
    return fake.stream(request);
  },
};

/** The kernel API of the hub running now, for the tool that answers itself. */
let current: { api: KernelApi; projectId: string; db: Db } | null = null;

/** Parks for `timeout_ms`, with a timeout outcome of its own when given; saves what the party needs first. */
async function parkCall(args: { timeout_ms: number; timeout_output?: string }, context: ToolCallContext): Promise<ToolOutcome> {
  await context.saveCheckpoint({ invocation: `inv-${context.callId}` });
  return { kind: 'park', timeoutMs: args.timeout_ms, ...(args.timeout_output ? { timeoutOutput: args.timeout_output } : {}) };
}

/** The party answers before the tool has even parked. */
async function answersItself(_args: unknown, context: ToolCallContext): Promise<ToolOutcome> {
  const { api, projectId } = current!;
  const state = await api.responses.answerParkedCall(projectId, context.responseId, context.callId, { output: 'answered early' });
  assert.equal(state.status, 'in_progress', 'kept while the run holds the response');
  return { kind: 'park', timeoutMs: LONG };
}

/** Run beside park_call in one step: once its sibling (the step's first call) is parked, answers it, then ends. */
async function answersSibling(_args: unknown, context: ToolCallContext): Promise<ToolOutcome> {
  const { api, projectId, db } = current!;
  const sibling = context.callId.replace(/_\d+$/, '_0');
  const status = async () =>
    (await db.query<{ status: string }>('SELECT status FROM tool_calls WHERE response_id = $1 AND call_id = $2', [context.responseId, sibling])).rows[0]
      ?.status;
  await until('the sibling is parked', async () => (await status()) === 'parked');
  await api.responses.answerParkedCall(projectId, context.responseId, sibling, { output: 'answered by the sibling' });
  return { kind: 'output', output: 'sibling done' };
}

const PARKING: Record<string, (args: any, context: ToolCallContext) => Promise<ToolOutcome>> = {
  park_call: parkCall,
  answers_itself: answersItself,
  answers_sibling: answersSibling,
};

/** Serves `{type: 'function', name}` entries: the parking tools above, run by the hub; any other name as a client function. */
const parkingTools: ToolProvider<ToolSpecEntry> = {
  kind: 'function',
  async resolve(spec, context): Promise<ResolvedTool[]> {
    const run = PARKING[spec.name ?? ''];
    if (!run) return functionTools.resolve(spec as Parameters<typeof functionTools.resolve>[0]);
    return [
      { name: spec.name!, kind: 'function', description: 'parks', parameters: { type: 'object', properties: {} }, risk: 'read', validateArguments: false, run },
    ];
  },
};

const isProblem = (slug: string, message?: RegExp) => (error: unknown) =>
  error instanceof PalaiError && error.slug === slug && (!message || message.test(error.message));

for (const kind of storeKinds) {
  describe(`parked tool calls [${kind}]`, { skip: kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false }, () => {
    let database: TestDatabase;
    let hub: Hub | null = null;
    let projectId: string;

    /** A hub on the suite's store with one worker slot (`api`: no worker at all). */
    async function start(role: Role = 'all'): Promise<Hub> {
      const started = await startHub({
        config: testConfig({ workerConcurrency: 1 }),
        db: database.db,
        logger: createLogger('silent'),
        role,
        tools: new ToolRegistry().register(parkingTools),
        models: new ModelRegistry().register(recordingModel),
      });
      current = { api: started.api, projectId, db: database.db };
      return started;
    }
    async function restart(role: Role = 'all'): Promise<Hub> {
      await hub?.close();
      hub = await start(role);
      return hub;
    }
    const api = () => hub!.api;

    before(async () => {
      database = await openTestDatabase(kind);
      hub = await startHub({ config: testConfig(), db: database.db, logger: createLogger('silent'), role: 'api' });
      projectId = (await createProject(database.db, 'parked')).id;
      await restart();
    });
    after(async () => {
      await hub?.close();
      await database?.drop();
    });

    let agents = 0;
    /** An agent whose first step calls `tool` with `args`, then answers "done". */
    async function agentCalling(tool: string, args: Record<string, unknown> = {}): Promise<string> {
      const name = `parker-${++agents}`;
      const script = [{ tool_calls: [{ name: tool, arguments: args }] }, { text: 'done' }];
      await api().agents.create(projectId, { name, model: { provider: 'fake', script }, tools: [{ type: 'function', name: tool }] });
      return name;
    }
    const admit = (agent: string, input = 'go') => api().responses.admit(projectId, { agent, input: [{ role: 'user', content: input }] });
    const callOf = async (responseId: string) =>
      (
        await database.db.query<{
          call_id: string;
          status: string;
          output: string | null;
          checkpoint: unknown;
          park_deadline: Date | null;
          park_ended: string | null;
        }>('SELECT call_id, status, output, checkpoint, park_deadline, park_ended FROM tool_calls WHERE response_id = $1', [responseId])
      ).rows[0];
    const parkedState = (responseId: string): Promise<ResponseState> =>
      until('the call is parked and the response waits', async () => {
        const state = await api().responses.get(projectId, responseId);
        return state.status === 'parked' && (await callOf(responseId))?.status === 'parked' && state;
      });
    const ended = (responseId: string) =>
      until('the response ends', async () => {
        const state = await api().responses.get(projectId, responseId);
        return state.status === 'completed' || state.status === 'failed' ? state : null;
      });
    const outputsOf = (state: ResponseState) => state.output.flatMap((item) => (item.type === 'function_call_output' ? [item.output] : []));

    test('a parked call frees its worker slot: another response runs meanwhile, and the answer resumes the run', async () => {
      const parker = await agentCalling('park_call', { timeout_ms: LONG });
      await api().agents.create(projectId, { name: 'plain', model: { provider: 'fake' } });
      const parked = await admit(parker);
      const waiting = await parkedState(parked.id);
      assert.deepEqual(waiting.pending_calls, [], 'nothing for the caller to answer');
      await until('the worker holds no run', () => hub!.worker!.busy === 0);
      const call = await callOf(parked.id);
      assert.deepEqual(call.checkpoint, { invocation: `inv-${call.call_id}` });

      // One slot, and it is free: a second response runs to its end while the first waits.
      const other = await admit('plain', 'meanwhile');
      const otherDone = await ended(other.id);
      assert.equal(otherDone.status, 'completed');
      assert.equal((await api().responses.get(projectId, parked.id)).status, 'parked');

      const answered = await api().responses.answerParkedCall(projectId, parked.id, call.call_id, { output: 'the party answered' });
      assert.notEqual(answered.status, 'parked');
      const done = await ended(parked.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(outputsOf(done), ['the party answered']);
      assert.ok(seenOutputs.includes('the party answered'), 'the model saw the answer');
      assert.equal((await callOf(parked.id)).park_ended, 'answered');
    });

    test('a repeated answer replays; a different answer for the same call is idempotency-conflict', async () => {
      const parked = await admit(await agentCalling('park_call', { timeout_ms: LONG }));
      await parkedState(parked.id);
      const { call_id } = await callOf(parked.id);
      const answer = (key: string, output: string) =>
        api().inbox.once(
          {
            projectId,
            source: PARTY_SOURCE,
            key,
            operation: 'answerParkedCall',
            fingerprint: api().inbox.fingerprint('answerParkedCall', { call_id }, { output }),
          },
          (claim) => api().responses.answerParkedCall(projectId, parked.id, call_id, { output }, { idempotency: claim }),
          async (record) => api().responses.get(projectId, record.resourceId!),
        );
      await answer('answer-1', 'first');
      await answer('answer-1', 'first');
      await assert.rejects(answer('answer-1', 'second'), isProblem('idempotency-conflict', /answer id "answer-1"/));
      await answer('answer-2', 'first');
      await assert.rejects(answer('answer-3', 'second'), isProblem('idempotency-conflict', /already answered, differently/));
      await assert.rejects(api().responses.answerParkedCall(projectId, parked.id, call_id, { output: 'third' }), isProblem('idempotency-conflict'));
      const done = await ended(parked.id);
      assert.deepEqual(outputsOf(done), ['first'], 'one answer, once');
      await api().responses.answerParkedCall(projectId, parked.id, call_id, { output: 'first' });
      assert.deepEqual(outputsOf(await api().responses.get(projectId, parked.id)), ['first'], 'a replay after the end changes nothing');
    });

    test('a call nobody answers gets its timeout outcome at its deadline; an answer after it is refused', async () => {
      const timeoutOutput = JSON.stringify({ error: 'the party never answered' });
      const parked = await admit(await agentCalling('park_call', { timeout_ms: 300, timeout_output: timeoutOutput }));
      const done = await ended(parked.id);
      const statuses = (await api().responses.events(projectId, parked.id, -1)).flatMap(({ event }) => (event.type === 'status' ? [event.status] : []));
      assert.ok(statuses.includes('parked'), `it was parked first: ${statuses.join(', ')}`);
      assert.ok(!statuses.includes('waiting_for_tool'), `no wait a caller must act on: ${statuses.join(', ')}`);
      assert.equal(done.status, 'completed');
      assert.deepEqual(outputsOf(done), [timeoutOutput]);
      assert.ok(seenOutputs.includes(timeoutOutput), 'the model saw the timeout outcome');
      const call = await callOf(parked.id);
      assert.equal(call.park_ended, 'timed_out');
      const tooLate = api().responses.answerParkedCall(projectId, parked.id, call.call_id, { output: 'too late' });
      await assert.rejects(tooLate, isProblem('invalid-state', /not answered before its deadline.*too late/));
      assert.deepEqual(outputsOf(await api().responses.get(projectId, parked.id)), [timeoutOutput]);
    });

    test('an answer after the deadline is refused even before the timeout is committed, and the timeout still comes', async () => {
      const parked = await admit(await agentCalling('park_call', { timeout_ms: LONG }));
      await parkedState(parked.id);
      // No worker while the deadline passes, so nobody commits the timeout yet; the deadline is brought forward to now.
      await restart('api');
      await database.db.query('UPDATE tool_calls SET park_deadline = clock_timestamp() WHERE response_id = $1', [parked.id]);
      await database.db.query('UPDATE responses SET wake_at = clock_timestamp() WHERE id = $1', [parked.id]);
      const call = await callOf(parked.id);
      await untilStorePasses(database.db, call.park_deadline!, 'the deadline passes by the store clock');
      assert.equal((await callOf(parked.id)).status, 'parked');
      await assert.rejects(api().responses.answerParkedCall(projectId, parked.id, call.call_id, { output: 'late' }), isProblem('invalid-state', /deadline/));
      await restart();
      const done = await ended(parked.id);
      assert.deepEqual(outputsOf(done), [JSON.stringify({ error: 'No answer came before the deadline.', timed_out: true })]);
      assert.ok(!seenOutputs.includes('late'));
    });

    test('an answer that comes while the tool still runs is kept, and ends the call as soon as it parks', async () => {
      const response = await admit(await agentCalling('answers_itself'));
      const done = await ended(response.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(outputsOf(done), ['answered early']);
      assert.equal((await callOf(response.id)).park_ended, 'answered');
    });

    test('an answer that lands between the call parking and the response parking is not left unseen', async () => {
      const name = `parker-${++agents}`;
      await api().agents.create(projectId, {
        name,
        model: {
          provider: 'fake',
          script: [{ tool_calls: [{ name: 'park_call', arguments: { timeout_ms: LONG } }, { name: 'answers_sibling' }] }, { text: 'done' }],
        },
        tools: [
          { type: 'function', name: 'park_call' },
          { type: 'function', name: 'answers_sibling' },
        ],
      });
      const response = await admit(name);
      const done = await ended(response.id);
      assert.equal(done.status, 'completed');
      assert.deepEqual(outputsOf(done).sort(), ['answered by the sibling', 'sibling done']);
    });

    test('a hub stopped while a call is parked loses nothing: the next one takes the answer and finishes', async () => {
      const parked = await admit(await agentCalling('park_call', { timeout_ms: LONG }));
      await parkedState(parked.id);
      const before = await callOf(parked.id);
      await restart();
      const after = await callOf(parked.id);
      assert.equal(after.status, 'parked');
      assert.deepEqual(after.checkpoint, before.checkpoint);
      assert.equal((await api().responses.get(projectId, parked.id)).status, 'parked');
      await api().responses.answerParkedCall(projectId, parked.id, before.call_id, { output: 'after the restart' });
      const done = await ended(parked.id);
      assert.deepEqual(outputsOf(done), ['after the restart']);
      assert.ok(seenOutputs.includes('after the restart'));
    });

    test('what is not a parked call takes no outside answer, and a parked call takes no client output', async () => {
      const client = await admit(await agentCalling('client_side'));
      await until('the response waits for the client', async () => (await api().responses.get(projectId, client.id)).status === 'waiting_for_tool');
      const clientCall = await callOf(client.id);
      await assert.rejects(
        api().responses.answerParkedCall(projectId, client.id, clientCall.call_id, { output: 'x' }),
        isProblem('invalid-state', /does not wait for an outside answer/),
      );
      await assert.rejects(api().responses.answerParkedCall(projectId, client.id, 'call_nobody', { output: 'x' }), isProblem('not-found'));
      await assert.rejects(
        api().responses.answerParkedCall(projectId, client.id, clientCall.call_id, { output: 42 as unknown as string }),
        isProblem('validation-failed'),
      );

      const parked = await admit(await agentCalling('park_call', { timeout_ms: LONG }));
      await parkedState(parked.id);
      const { call_id } = await callOf(parked.id);
      await assert.rejects(
        api().responses.submitToolOutputs(projectId, parked.id, { outputs: [{ call_id, output: 'from the client' }] }),
        isProblem('invalid-state', /parked/),
      );
      await api().responses.cancel(projectId, parked.id);
      await assert.rejects(
        api().responses.answerParkedCall(projectId, parked.id, call_id, { output: 'x' }),
        isProblem('invalid-state', /already ended as canceled/),
      );
    });
  });
}
