// Run options that narrow a run, as a specification: a surface admitting a
// response through the kernel API may give it limits smaller than its agent's
// (each applies as the smaller of the two, so a larger one changes nothing), a
// list of the only tools it may use (the model is offered no other, and a call
// of a hidden one is not run) and tool entries of its own, resolved beside the
// agent's; a bad entry is refused at admission, naming it. The stored options
// show what was asked, and the REST API maps none of them from a request.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import request from 'supertest';
import { FakeModel } from '../../adapters/models/fake/fake-model.js';
import { effectiveSpec } from '../../core/agents/effective-spec.js';
import { startHub, type Hub } from '../../cli/hub.js';
import type { AdmissionCommand, KernelApi, ResponseState } from '../../core/api/index.js';
import { createApiKey } from '../../core/auth/api-keys.js';
import { createProject } from '../../core/auth/projects.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import { createLogger } from '../../core/logger.js';
import { ModelRegistry, type ModelAdapter } from '../../core/models/model-port.js';
import type { CreateAgentRequest, Item } from '../../generated/schemas.js';
import { testConfig } from '../support/hub.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

/** The tool names each model call of a response was offered, in call order: what "the model saw". */
const offered = new Map<string, string[][]>();
const fake = new FakeModel();
const recordingModel: ModelAdapter = {
  provider: 'fake',
  coalesceDeltas: false,
  stream(modelRequest) {
    const calls = offered.get(modelRequest.responseId) ?? [];
    calls.push(modelRequest.tools.map((tool) => tool.name).sort());
    offered.set(modelRequest.responseId, calls);
    return fake.stream(modelRequest);
  },
};

const say = (content: string) => [{ role: 'user' as const, content }];
/** Seven words in, seven deltas out: the fake model counts 14 tokens. */
const SEVEN_WORDS = 'one two three four five six seven';
const callTool = (name: string) => ({ tool_calls: [{ name }] });

const outputsOf = (state: ResponseState) =>
  state.output.filter((item): item is Extract<Item, { type: 'function_call_output' }> => item.type === 'function_call_output').map((item) => item.output);

test('effectiveSpec: each limit is the smaller of the two, the agent default of max_steps counts, and nothing asked changes nothing', () => {
  const spec = { model: { provider: 'fake' as const }, limits: { max_total_tokens: 100, timeout_seconds: 60 } };
  assert.equal(effectiveSpec(spec, {}), spec);
  assert.deepEqual(effectiveSpec(spec, { limits: { max_total_tokens: 10, timeout_seconds: 600, max_tool_calls: 3 } }).limits, {
    max_total_tokens: 10,
    timeout_seconds: 60,
    max_tool_calls: 3,
  });
  assert.deepEqual(effectiveSpec(spec, { limits: { max_steps: 1000 } }).limits, { max_total_tokens: 100, timeout_seconds: 60, max_steps: 100 });
  assert.deepEqual(effectiveSpec(spec, { limits: { max_steps: 2 } }).limits?.max_steps, 2);
  assert.deepEqual(spec.limits, { max_total_tokens: 100, timeout_seconds: 60 }, "the agent's spec is left as it was");
});

for (const kind of storeKinds) {
  describe(`run options that narrow a run [${kind}]`, { skip: kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false }, () => {
    let database: TestDatabase;
    let hub: Hub;
    let projectId: string;
    const api = (): KernelApi => hub.api;

    before(async () => {
      database = await openTestDatabase(kind);
      hub = await startHub({
        config: testConfig(),
        db: database.db,
        logger: createLogger('silent'),
        models: new ModelRegistry().register(recordingModel),
      });
      projectId = (await createProject(database.db, 'narrowing')).id;
    });
    after(async () => {
      await hub?.close();
      await database?.drop();
    });

    const agent = (name: string, spec: Omit<CreateAgentRequest, 'name' | 'model'> & { script?: unknown[] } = {}) => {
      const { script, ...rest } = spec;
      return api().agents.create(projectId, { name, model: { provider: 'fake', ...(script ? { script } : {}) } as CreateAgentRequest['model'], ...rest });
    };
    /** Admits the command as a waiting caller would (run in this process) and waits for the run to settle. */
    const run = async (command: AdmissionCommand): Promise<ResponseState> => {
      const admitted = await api().responses.admit(projectId, command, { runHere: true });
      return api().responses.waitUntilSettled(projectId, admitted.id, 20_000);
    };
    /** How long after its admission the response's deadline falls, in seconds (null: none). */
    const deadlineAfter = async (responseId: string): Promise<number | null> => {
      const { rows } = await database.db.query<{ seconds: number | null }>(
        'SELECT round(extract(epoch FROM deadline_at - created_at))::integer AS seconds FROM responses WHERE id = $1',
        [responseId],
      );
      return rows[0].seconds;
    };
    const count = async (): Promise<number> =>
      (await database.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM responses WHERE project_id = $1', [projectId])).rows[0].n;

    test("a narrowed max_total_tokens ends the run budget_exceeded where the agent's own limit would not", async () => {
      await agent('roomy', { limits: { max_total_tokens: 1000 } });
      const own = await run({ agent: 'roomy', input: say(SEVEN_WORDS) });
      assert.equal(own.status, 'completed', 'the agent alone has room for it');
      assert.equal(own.usage?.total_tokens, 14);

      const narrowed = await run({ agent: 'roomy', input: say(SEVEN_WORDS), options: { limits: { max_total_tokens: 5 } } });
      assert.equal(narrowed.status, 'budget_exceeded');
      assert.equal(narrowed.error?.code, 'limit-exceeded');
      assert.equal(narrowed.error?.message, 'The token budget of 5 was used up.');
      const queued = await api().responses.admit(projectId, { agent: 'roomy', input: say(SEVEN_WORDS), options: { limits: { max_total_tokens: 5 } } });
      assert.equal(queued.status, 'queued', 'admitted without running here: a worker claims it');
      assert.equal((await api().responses.waitUntilSettled(projectId, queued.id, 20_000)).status, 'budget_exceeded', 'the claimed run is narrowed too');

      await agent('unbounded');
      const unbounded = await run({ agent: 'unbounded', input: say(SEVEN_WORDS), options: { limits: { max_total_tokens: 5 } } });
      assert.equal(unbounded.status, 'budget_exceeded', 'an agent without a budget gets the one asked');
    });

    test('a wider limit never widens the agent’s', async () => {
      await agent('frugal', { limits: { max_total_tokens: 5, timeout_seconds: 600 } });
      const wider = await run({ agent: 'frugal', input: say(SEVEN_WORDS), options: { limits: { max_total_tokens: 1_000_000, timeout_seconds: 86_400 } } });
      assert.equal(wider.status, 'budget_exceeded');
      assert.equal(wider.error?.message, 'The token budget of 5 was used up.');
      assert.equal(await deadlineAfter(wider.id), 600, "the agent's timeout sets the deadline");
    });

    test('a narrowed timeout_seconds sets an earlier deadline_at', async () => {
      await agent('patient', { limits: { timeout_seconds: 3600 } });
      const own = await run({ agent: 'patient', input: say('hello') });
      assert.equal(await deadlineAfter(own.id), 3600);
      const narrowed = await run({ agent: 'patient', input: say('hello'), options: { limits: { timeout_seconds: 60 } } });
      assert.equal(narrowed.status, 'completed');
      assert.equal(await deadlineAfter(narrowed.id), 60);

      await agent('timeless');
      const queued = await api().responses.admit(projectId, { agent: 'timeless', input: say('hello'), options: { limits: { timeout_seconds: 90 } } });
      assert.equal(await deadlineAfter(queued.id), 90, 'an agent without a timeout gets the one asked, on the queued path too');
      await api().responses.waitUntilSettled(projectId, queued.id, 20_000);
    });

    test('narrowed max_steps and max_tool_calls end a run the agent would let go on', async () => {
      await agent('looper', { tools: [{ type: 'builtin', name: 'echo' }], script: [callTool('echo'), callTool('echo'), { text: 'done' }] });
      assert.equal((await run({ agent: 'looper', input: say('go') })).status, 'completed');
      const steps = await run({ agent: 'looper', input: say('go'), options: { limits: { max_steps: 1 } } });
      assert.equal(steps.status, 'failed');
      assert.match(steps.error?.message ?? '', /max_steps \(1\)/);
      const calls = await run({ agent: 'looper', input: say('go'), options: { limits: { max_tool_calls: 1 } } });
      assert.equal(calls.status, 'failed');
      assert.match(calls.error?.message ?? '', /max_tool_calls \(1\)/);
    });

    test('allowed_tools hides the other tools from the model, and a call of a hidden tool is not run', async () => {
      await agent('handy', {
        tools: [
          { type: 'builtin', name: 'echo' },
          { type: 'builtin', name: 'current_time' },
        ],
        script: [callTool('current_time'), { text: 'done' }],
      });
      const own = await run({ agent: 'handy', input: say('time?') });
      assert.deepEqual(offered.get(own.id)?.[0], ['current_time', 'echo']);
      assert.doesNotMatch(outputsOf(own)[0], /error/, 'the agent alone runs it');

      const narrowed = await run({
        agent: 'handy',
        input: say('time?'),
        options: { allowed_tools: ['echo', 'not_a_tool_of_this_run'], tools: [{ type: 'function', name: 'lookup' }] },
      });
      assert.equal(narrowed.status, 'completed');
      assert.deepEqual(offered.get(narrowed.id), [['echo'], ['echo']], 'every model call was offered only the allowed tool');
      assert.deepEqual(outputsOf(narrowed), [JSON.stringify({ error: 'There is no tool named "current_time".' })]);
      const { rows } = await database.db.query<{ kind: string; attempts: number }>('SELECT kind, attempts FROM tool_calls WHERE response_id = $1', [
        narrowed.id,
      ]);
      assert.deepEqual(rows, [{ kind: 'unknown', attempts: 0 }], 'the hidden tool never ran');

      const none = await run({ agent: 'handy', input: say('time?'), options: { allowed_tools: [] } });
      assert.deepEqual(offered.get(none.id)?.[0], [], 'an empty list leaves the run no tools');

      await assert.rejects(
        api().responses.admit(projectId, {
          agent: 'handy',
          input: say('x'),
          options: { allowed_tools: ['echo'], tool_choice: { type: 'function', name: 'current_time' } },
        }),
        (error: unknown) => isPalaiError(error) && error.slug === 'validation-failed' && error.errors?.[0]?.pointer === '/options/tool_choice/name',
        'forcing a tool allowed_tools hides is refused',
      );
    });

    test('tool_entries add a tool for the run, resolved by its provider beside the agent’s own', async () => {
      await agent('bare', { tools: [{ type: 'builtin', name: 'echo' }], script: [callTool('current_time'), { text: 'done' }] });
      const added = await run({ agent: 'bare', input: say('time?'), options: { tool_entries: [{ type: 'builtin', name: 'current_time' }] } });
      assert.equal(added.status, 'completed');
      assert.deepEqual(offered.get(added.id)?.[0], ['current_time', 'echo']);
      const [output] = outputsOf(added);
      assert.ok(!Number.isNaN(Date.parse(output)), `the added tool ran: ${output}`);

      const hidden = await run({
        agent: 'bare',
        input: say('time?'),
        options: { tool_entries: [{ type: 'builtin', name: 'current_time' }], allowed_tools: ['echo'] },
      });
      assert.deepEqual(offered.get(hidden.id)?.[0], ['echo'], 'allowed_tools filters added entries too');

      const clash = await run({ agent: 'bare', input: say('x'), options: { tool_entries: [{ type: 'builtin', name: 'echo' }] } });
      assert.equal(clash.status, 'failed', "an entry named like one of the agent's tools fails the run as any clash does");
      assert.equal(clash.error?.code, 'invalid-request');
      assert.match(clash.error?.message ?? '', /Two tools are named "echo"/);
    });

    test('a bad tool entry is refused at admission as validation-failed naming the entry, and nothing is written', async () => {
      await agent('picky');
      const before = await count();
      const cases: Array<[entries: unknown[], pointer: string]> = [
        [
          [
            { type: 'builtin', name: 'current_time' },
            { type: 'builtin', name: 'no_such_tool' },
          ],
          '/options/tool_entries/1',
        ],
        [[{ type: 'builtin' }], '/options/tool_entries/0'],
        [[{ type: 'function', name: 'f', parameters: { type: 'not-a-type' } }], '/options/tool_entries/0/parameters'],
      ];
      for (const [entries, pointer] of cases) {
        const command = { agent: 'picky', input: say('x'), options: { tool_entries: entries } } as AdmissionCommand;
        await assert.rejects(api().responses.admit(projectId, command, { runHere: true }), (error: unknown) => {
          assert.ok(isPalaiError(error), String(error));
          assert.equal(error.slug, 'validation-failed', JSON.stringify(entries));
          assert.ok(
            error.errors?.some((e) => e.pointer === pointer || e.pointer.startsWith(`${pointer}/`)),
            `${JSON.stringify(entries)} names ${pointer}: ${JSON.stringify(error.errors)}`,
          );
          assert.ok(error.message.includes(pointer), error.message);
          return true;
        });
      }
      assert.equal(await count(), before, 'no response was written');
    });

    test('the stored options show the three fields as asked, and leave them out when not asked', async () => {
      await agent('shown', { limits: { max_total_tokens: 1000 } });
      const asked = {
        allowed_tools: ['current_time'],
        limits: { max_total_tokens: 500, timeout_seconds: 120 },
        tool_entries: [{ type: 'builtin' as const, name: 'current_time' }],
      };
      const state = await run({ agent: 'shown', input: say('hello'), options: asked });
      for (const seen of [state, await api().responses.get(projectId, state.id)]) {
        assert.deepEqual(seen.options?.allowed_tools, asked.allowed_tools);
        assert.deepEqual(seen.options?.limits, asked.limits, "as asked, not the agent's");
        assert.deepEqual(seen.options?.tool_entries, asked.tool_entries);
      }
      const plain = await run({ agent: 'shown', input: say('hello') });
      assert.equal('allowed_tools' in plain.options!, false);
      assert.equal('limits' in plain.options!, false);
      assert.equal('tool_entries' in plain.options!, false);
    });

    test('the REST API maps none of them from a request', async () => {
      const key = await createApiKey(database.db, projectId, 'rest');
      const res = await request(hub.app)
        .post('/v1/responses')
        .set({ Authorization: `Bearer ${key.secret}` })
        .send({
          model: 'shown',
          input: SEVEN_WORDS,
          allowed_tools: [],
          limits: { max_total_tokens: 1 },
          tool_entries: [{ type: 'builtin', name: 'current_time' }],
        });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'completed', 'no narrower limit applied');
      const state = await api().responses.get(projectId, res.body.id);
      assert.equal('allowed_tools' in state.options!, false);
      assert.equal('limits' in state.options!, false);
      assert.equal('tool_entries' in state.options!, false);
    });
  });
}
