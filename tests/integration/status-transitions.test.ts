// Every status write obeys the transition table, and is journaled. A trigger
// installed for this test records each change of responses.status, whoever
// wrote it (the status writer, a claim, any SQL added later); runs covering
// every way a response moves are driven through the API; then each recorded
// change must be one canTransition allows, each response's status events must
// replay exactly its changes, and every journaled event must be a kernel event
// of protocols/kernel-events.schema.json.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { canTransition, isTerminal, type ResponseStatus } from '../../core/response-status.js';
import { KernelEvent as validKernelEvent } from '../../generated/protocol-validators.js';
import { defaultTools } from '../../core/tools/default-tools.js';
import { functionTools } from '../../core/tools/function-provider.js';
import type { ResolvedTool, ToolCallContext, ToolOutcome, ToolProvider, ToolSpecEntry } from '../../core/tools/tool-port.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

const AUDIT = `
  CREATE TABLE status_audit (n serial PRIMARY KEY, response_id text NOT NULL, from_status text, to_status text NOT NULL);
  CREATE FUNCTION audit_status() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO status_audit (response_id, from_status, to_status) VALUES (NEW.id, NULL, NEW.status);
    ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
      INSERT INTO status_audit (response_id, from_status, to_status) VALUES (NEW.id, OLD.status, NEW.status);
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER audit_status AFTER INSERT OR UPDATE OF status ON responses FOR EACH ROW EXECUTE FUNCTION audit_status();`;

const echoCall = (text: string) => ({ tool_calls: [{ name: 'echo', arguments: { text } }] });

/** `park_call` parks for an outside party (for `timeout_ms`); any other function is the client's. */
const parkingTools: ToolProvider<ToolSpecEntry> = {
  kind: 'function',
  async resolve(spec): Promise<ResolvedTool[]> {
    if (spec.name !== 'park_call') return functionTools.resolve(spec as Parameters<typeof functionTools.resolve>[0]);
    const run = async (args: { timeout_ms?: number }, _context: ToolCallContext): Promise<ToolOutcome> => ({
      kind: 'park',
      timeoutMs: args.timeout_ms ?? 60_000,
    });
    return [
      {
        name: 'park_call',
        kind: 'function',
        description: 'parks',
        parameters: { type: 'object', properties: {} },
        risk: 'read',
        validateArguments: false,
        run,
      },
    ];
  },
};
const parkCall = (timeout_ms: number) => ({ tool_calls: [{ name: 'park_call', arguments: { timeout_ms } }] });

await describeEachStore(
  'status transitions',
  (ctx) => {
    const post = (path: string, body: Record<string, unknown>) => ctx().http.post(path).set(ctx().auth).send(body);
    const get = async (id: string) => (await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth)).body;
    const settled = async (id: string, done: (status: ResponseStatus) => boolean) => {
      for (let i = 0; i < 400; i++) {
        const body = await get(id);
        if (done(body.palai_status)) return body;
        await sleep(25);
      }
      throw new Error(`response ${id} did not settle`);
    };

    before(async () => {
      await ctx().hub.kernel.db.exec(AUDIT);
      const fake = (script: unknown[]) => ({ provider: 'fake', script });
      await createAgent(ctx, { name: 'plain', model: fake([{ text: 'hello' }]) });
      await createAgent(ctx, {
        name: 'client-tool',
        model: fake([{ tool_calls: [{ name: 'lookup', arguments: { q: 1 } }] }, { text: 'thanks' }]),
        tools: [{ type: 'function', name: 'lookup' }],
      });
      await createAgent(ctx, {
        name: 'gated',
        model: fake([echoCall('a'), { text: 'done' }]),
        tools: [{ type: 'builtin', name: 'echo' }],
        approval: { tools: ['echo'] },
      });
      await createAgent(ctx, {
        name: 'gated-and-client',
        model: fake([
          {
            tool_calls: [
              { name: 'echo', arguments: { text: 'b' } },
              { name: 'lookup', arguments: { q: 2 } },
            ],
          },
          { text: 'both' },
        ]),
        tools: [
          { type: 'builtin', name: 'echo' },
          { type: 'function', name: 'lookup' },
        ],
        approval: { tools: ['echo'] },
      });
      await createAgent(ctx, {
        name: 'asker',
        model: fake([{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] }, { text: 'ok' }]),
        tools: [{ type: 'builtin', name: 'ask_user' }],
      });
      await createAgent(ctx, { name: 'slow', model: fake([{ text: 'a b c d e f g h i j k l m n o p', delay_ms: 300 }]) });
      await createAgent(ctx, { name: 'late', model: fake([{ text: 'a b c d e f g h i j', delay_ms: 400 }]), limits: { timeout_seconds: 1 } });
      await createAgent(ctx, {
        name: 'looper',
        model: fake([echoCall('1'), echoCall('2')]),
        tools: [{ type: 'builtin', name: 'echo' }],
        limits: { max_steps: 1 },
      });
      for (const [name, timeout] of [
        ['parker', 60_000],
        ['parker-unanswered', 200],
      ] as const) {
        await createAgent(ctx, { name, model: fake([parkCall(timeout), { text: 'parked and back' }]), tools: [{ type: 'function', name: 'park_call' }] });
      }
    });

    test('every way a response moves writes only allowed transitions, each journaled once, as kernel events', async () => {
      const ids: string[] = [];
      ids.push((await respond(ctx, { model: 'plain', input: 'x' })).id);

      const tool = await respond(ctx, { model: 'client-tool', input: 'x' });
      ids.push(tool.id);
      assert.equal(tool.palai_status, 'waiting_for_tool');
      await post(`/v1/responses/${tool.id}/tool_outputs`, { outputs: [{ call_id: tool.required_action.calls[0].call_id, output: '42' }] });

      const continued = await respond(ctx, { model: 'client-tool', input: 'y' });
      ids.push(continued.id);
      const next = await respond(ctx, {
        model: 'client-tool',
        previous_response_id: continued.id,
        input: [{ type: 'function_call_output', call_id: continued.required_action.calls[0].call_id, output: '7' }],
      });
      ids.push(next.id);

      for (const decision of ['approve', 'deny']) {
        const gated = await respond(ctx, { model: 'gated', input: decision });
        ids.push(gated.id);
        assert.equal(gated.palai_status, 'waiting_for_approval');
        await post(`/v1/responses/${gated.id}/approvals`, { call_id: gated.required_action.calls[0].call_id, decision });
      }

      // A denial that leaves a client tool output due: the response goes back to the workers, which park it again.
      const both = await respond(ctx, { model: 'gated-and-client', input: 'x' });
      ids.push(both.id);
      const echo = both.required_action.calls.find((c: { name: string }) => c.name === 'echo');
      await post(`/v1/responses/${both.id}/approvals`, { call_id: echo.call_id, decision: 'deny' });
      const parked = await settled(both.id, (s) => s === 'waiting_for_tool');
      await post(`/v1/responses/${both.id}/tool_outputs`, { outputs: [{ call_id: parked.required_action.calls[0].call_id, output: 'x' }] });

      const asker = await respond(ctx, { model: 'asker', input: 'x' });
      ids.push(asker.id);
      await post(`/v1/responses/${asker.id}/input`, { input: 'this one' });

      const queued = await respond(ctx, { model: 'slow', input: 'x', background: true });
      ids.push(queued.id);
      await post(`/v1/responses/${queued.id}/cancel`, {});
      const waiting = await respond(ctx, { model: 'client-tool', input: 'x' });
      ids.push(waiting.id);
      await post(`/v1/responses/${waiting.id}/cancel`, {});
      const running = await respond(ctx, { model: 'slow', input: 'x', background: true });
      ids.push(running.id);
      await settled(running.id, (s) => s === 'in_progress');
      await post(`/v1/responses/${running.id}/cancel`, {});

      // Parked on an outside party: answered, past its deadline, cancelled.
      const parkedCall = async (id: string) => {
        await settled(id, (s) => s === 'parked');
        return (await db.query<{ call_id: string }>("SELECT call_id FROM tool_calls WHERE response_id = $1 AND status = 'parked'", [id])).rows[0].call_id;
      };
      const { db } = ctx().hub.kernel;
      const answered = await respond(ctx, { model: 'parker', input: 'x', background: true });
      ids.push(answered.id);
      await ctx().hub.api.responses.answerParkedCall(ctx().projectId, answered.id, await parkedCall(answered.id), { output: 'the answer' });
      ids.push((await respond(ctx, { model: 'parker-unanswered', input: 'x' })).id);
      const dropped = await respond(ctx, { model: 'parker', input: 'x', background: true });
      ids.push(dropped.id);
      await parkedCall(dropped.id);
      await post(`/v1/responses/${dropped.id}/cancel`, {});

      ids.push((await respond(ctx, { model: 'late', input: 'x', background: true })).id);
      ids.push((await respond(ctx, { model: 'looper', input: 'x' })).id);

      const finals = await Promise.all(ids.map((id) => settled(id, isTerminal)));
      assert.deepEqual(new Set(finals.map((f) => f.palai_status)), new Set(['completed', 'canceled', 'timed_out', 'failed']));

      const audit = (
        await db.query<{ response_id: string; from_status: ResponseStatus | null; to_status: ResponseStatus }>(
          'SELECT response_id, from_status, to_status FROM status_audit WHERE response_id = ANY($1) ORDER BY n',
          [ids],
        )
      ).rows;
      const illegal = audit.filter((a) => a.from_status !== null && !canTransition(a.from_status, a.to_status));
      assert.deepEqual(illegal, [], 'every status write is in the transition table');
      // Admission inserts a response queued, or — on the synchronous fast path,
      // claimed by the admitting transaction — already in progress: both changes
      // in one transaction, so the row is written once, as queued → in_progress.
      const admissions = audit.filter((a) => a.from_status === null);
      assert.ok(
        admissions.every((a) => a.to_status === 'queued' || a.to_status === 'in_progress'),
        'a response is admitted queued, or queued and claimed at once',
      );
      assert.ok(
        admissions.some((a) => a.to_status === 'in_progress'),
        'the scenarios cover admission with its claim',
      );
      const changes = audit.flatMap((a) =>
        a.from_status === null && a.to_status === 'in_progress'
          ? [
              { ...a, to_status: 'queued' as const },
              { ...a, from_status: 'queued' as const },
            ]
          : [a],
      );
      const seen = new Set(changes.map((a) => `${a.from_status}>${a.to_status}`));
      for (const pair of [
        'queued>in_progress',
        'in_progress>completed',
        'in_progress>waiting_for_tool',
        'waiting_for_tool>in_progress',
        'in_progress>waiting_for_approval',
        'waiting_for_approval>in_progress',
        'in_progress>waiting_for_input',
        'waiting_for_input>in_progress',
        'waiting_for_tool>canceled',
        'in_progress>parked',
        'parked>in_progress',
        'parked>canceled',
        'in_progress>canceled',
        'in_progress>timed_out',
        'in_progress>failed',
      ]) {
        assert.ok(seen.has(pair), `the scenarios cover ${pair}`);
      }

      for (const id of ids) {
        const events = (
          await db.query<{ type: string; data: Record<string, unknown> }>('SELECT type, data FROM response_events WHERE response_id = $1 ORDER BY sequence', [
            id,
          ])
        ).rows.map((row) => ({ type: row.type, ...row.data }));
        for (const event of events)
          assert.ok(validKernelEvent(event), `${id}: ${JSON.stringify(validKernelEvent.errors)} in ${JSON.stringify(event).slice(0, 300)}`);
        const journaled = events.flatMap((e) => (e.type === 'status' ? [(e as { status?: string }).status] : []));
        const written = changes.filter((a) => a.response_id === id).map((a) => a.to_status);
        assert.deepEqual(journaled, written, `${id}: its status events replay its status changes, one each`);
      }
    });
  },
  {},
  { tools: defaultTools().register(parkingTools) },
);
