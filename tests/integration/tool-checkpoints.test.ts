// The durable tool-call port: a tool commits a checkpoint under the response's
// lease before it waits; a worker that lost the response cannot write one; the
// run that takes the response over runs the call again as attempt 2 with the
// checkpoint; and a tool can ask the human a question whose answer comes back
// to it (resume) instead of ending the call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LeaseLostError } from '../../core/journal/journal.js';
import { ToolRegistry } from '../../core/tools/tool-registry.js';
import type { ResolvedTool, ToolCallContext, ToolOutcome, ToolProvider, ToolSpecEntry } from '../../core/tools/tool-port.js';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

/** A latch a test opens from outside. */
function latch(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

interface Run {
  attempt: number;
  checkpoint: unknown;
  answer: string | null;
}

/** What each response's tool did, and the latches its test holds (the suite runs once per store). */
interface Trace {
  runs: Run[];
  started: ReturnType<typeof latch>;
  proceed: ReturnType<typeof latch>;
  staleSave: unknown;
}
const traces = new Map<string, Trace>();
const traceOf = (responseId: string): Trace => {
  let trace = traces.get(responseId);
  if (!trace) traces.set(responseId, (trace = { runs: [], started: latch(), proceed: latch(), staleSave: null }));
  return trace;
};

const record = (context: ToolCallContext) =>
  traceOf(context.responseId).runs.push({ attempt: context.attempt, checkpoint: context.checkpoint, answer: context.answer });

/** Saves the remote task id, then (on its first run) waits until the test took the lease away. */
async function remoteStep(context: ToolCallContext): Promise<ToolOutcome> {
  record(context);
  const trace = traceOf(context.responseId);
  if (context.checkpoint !== null) return { kind: 'output', output: `resumed ${JSON.stringify(context.checkpoint)} at attempt ${context.attempt}` };
  await context.saveCheckpoint({ remote_task: 'task-1' });
  trace.started.open();
  await trace.proceed.promise;
  try {
    await context.saveCheckpoint({ remote_task: 'task-2' });
  } catch (error) {
    trace.staleSave = error;
  }
  // Its worker no longer owns the response: it stops when the heartbeat notices.
  await new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true }));
  throw new Error('unreachable');
}

/** Asks twice, each answer coming back to it, and answers with both. */
async function twoQuestions(context: ToolCallContext): Promise<ToolOutcome> {
  record(context);
  const answers = ((context.checkpoint as { answers?: string[] } | null)?.answers ?? []).slice();
  if (context.answer !== null) answers.push(context.answer);
  await context.saveCheckpoint({ answers });
  if (answers.length === 0) return { kind: 'await_input', question: 'Which colour?', resume: true };
  if (answers.length === 1) return { kind: 'await_input', question: 'Which size?', resume: true };
  return { kind: 'output', output: answers.join(',') };
}

/** As ask_user does: a question without resume, whose answer is the output. */
async function plainQuestion(context: ToolCallContext): Promise<ToolOutcome> {
  record(context);
  return { kind: 'await_input', question: 'Why?' };
}

const TOOLS: Record<string, (context: ToolCallContext) => Promise<ToolOutcome>> = {
  remote_step: remoteStep,
  two_questions: twoQuestions,
  plain_question: plainQuestion,
};

/** Serves `{type: 'function', name}` entries with the tools above, run by the hub. */
const durableTools: ToolProvider<ToolSpecEntry> = {
  kind: 'function',
  async resolve(spec): Promise<ResolvedTool[]> {
    const run = TOOLS[spec.name ?? ''];
    return [
      {
        name: spec.name!,
        kind: 'function',
        description: 'a durable test tool',
        parameters: { type: 'object', properties: {} },
        risk: 'read',
        validateArguments: false,
        run: (_args, context) => run(context),
      },
    ];
  },
};

await describeEachStore(
  'durable tool calls',
  (ctx) => {
    const api = () => ctx().hub.api;
    const admit = (agent: string) => api().responses.admit(ctx().projectId, { agent: agent, input: [{ role: 'user', content: 'go' }] });
    const settled = (id: string) => api().responses.waitUntilSettled(ctx().projectId, id, 20_000);
    const callRow = async (responseId: string) =>
      (
        await ctx().hub.kernel.db.query<{ attempts: number; checkpoint: unknown; status: string; output: string | null; answer: string | null }>(
          'SELECT attempts, checkpoint, status, output, answer FROM tool_calls WHERE response_id = $1',
          [responseId],
        )
      ).rows[0];

    test('a checkpoint survives the worker losing the response: the takeover runs the call again as attempt 2 with it', async () => {
      await createAgent(ctx, {
        name: 'remote-stepper',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'remote_step', arguments: {} }] }, { text: 'done' }] },
        tools: [{ type: 'function', name: 'remote_step' }],
      });
      const response = await admit('remote-stepper');
      const trace = traceOf(response.id);
      await trace.started.promise;
      assert.deepEqual((await callRow(response.id)).checkpoint, { remote_task: 'task-1' }, 'committed before the tool went on');
      // Another worker's claim: the token moves on, and the lease runs out.
      await ctx().hub.kernel.db.query(`UPDATE responses SET lease_token = lease_token + 1, lease_expires_at = now() + interval '1 second' WHERE id = $1`, [
        response.id,
      ]);
      trace.proceed.open();
      const final = await settled(response.id);
      assert.equal(final.status, 'completed');
      assert.ok(trace.staleSave instanceof LeaseLostError, `the stale worker's checkpoint is refused: ${String(trace.staleSave)}`);
      const row = await callRow(response.id);
      assert.deepEqual(row.checkpoint, { remote_task: 'task-1' }, 'the stale write left nothing behind');
      assert.equal(row.status, 'completed');
      assert.equal(row.output, 'resumed {"remote_task":"task-1"} at attempt 2');
      assert.equal(row.attempts, 2);
      assert.deepEqual(
        trace.runs.map((r) => [r.attempt, r.checkpoint]),
        [
          [1, null],
          [2, { remote_task: 'task-1' }],
        ],
      );
    });

    test('a resumable question: each answer goes back to the tool, and only its final outcome is the output', async () => {
      await createAgent(ctx, {
        name: 'questioner',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'two_questions', arguments: {} }] }, { text: 'thanks' }] },
        tools: [{ type: 'function', name: 'two_questions' }],
      });
      const response = await admit('questioner');
      let state = await settled(response.id);
      assert.equal(state.status, 'waiting_for_input');
      assert.equal(state.pending_calls[0].question, 'Which colour?');

      state = await api().responses.submitInput(ctx().projectId, response.id, { input: 'blue' });
      state = await settled(response.id);
      assert.equal(state.status, 'waiting_for_input', 'the tool asked again instead of ending');
      assert.equal(state.pending_calls[0].question, 'Which size?');
      const waiting = await callRow(response.id);
      assert.equal(waiting.status, 'awaiting_input');
      assert.equal(waiting.answer, null, 'a consumed answer is not handed over twice');

      await api().responses.submitInput(ctx().projectId, response.id, { input: 'large' });
      state = await settled(response.id);
      assert.equal(state.status, 'completed');
      const outputs = state.output.filter((item) => item.type === 'function_call_output');
      assert.equal(outputs.length, 1, 'one output for the call: its final one');
      assert.equal((outputs[0] as { output: string }).output, 'blue,large');
      assert.deepEqual(
        traceOf(response.id).runs.map((r) => [r.attempt, r.answer]),
        [
          [1, null],
          [2, 'blue'],
          [3, 'large'],
        ],
      );
    });

    test("a question without resume keeps ask_user's meaning: the answer is the output, and the call runs once", async () => {
      await createAgent(ctx, {
        name: 'plain-asker',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'plain_question', arguments: {} }] }, { text: 'ok' }] },
        tools: [{ type: 'function', name: 'plain_question' }],
      });
      const response = await admit('plain-asker');
      assert.equal((await settled(response.id)).status, 'waiting_for_input');
      await api().responses.submitInput(ctx().projectId, response.id, { input: 'because' });
      const state = await settled(response.id);
      assert.equal(state.status, 'completed');
      assert.equal((await callRow(response.id)).output, 'because');
      assert.equal(traceOf(response.id).runs.length, 1);
    });
  },
  { leaseSeconds: 1 },
  { tools: new ToolRegistry().register(durableTools) },
);
