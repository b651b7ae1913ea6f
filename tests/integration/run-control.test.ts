// Run control: cancelling a running response, the agent's limits, the output
// contract, resumable event streams, the journal's invariants and /metrics.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before, test } from 'node:test';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { parseSse } from '../support/sse.js';
import { matchesSchema } from '../../adapters/http/validation.js';
import { ranCalls, toolResult, toolResults } from '../support/tool-results.js';

const TERMINAL_EVENTS = ['response.completed', 'response.failed', 'response.cancelled', 'response.incomplete'];

const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i + 1}`).join(' ');
const echoCall = (text: string) => ({ tool_calls: [{ name: 'echo', arguments: { text } }] });

/** Checks one SSE event against the document and returns it. */
function checkedEvent(data: any): any {
  const check = matchesSchema('ResponseStreamEvent', data);
  assert.ok(check.ok, `${JSON.stringify(check.errors)}: ${JSON.stringify(data)}`);
  return data;
}

/** Reads an SSE body as it arrives, yielding each event (its SSE id and event name checked). */
async function* liveEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<any> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end + 2);
      buffer = buffer.slice(end + 2);
      for (const frame of parseSse(block)) {
        assert.equal(frame.id, String(frame.data.sequence_number));
        assert.equal(frame.event, frame.data.type);
        yield checkedEvent(frame.data);
      }
    }
  }
}

await describeEachStore('run control', (ctx) => {
  let server: Server | undefined;
  let baseUrl = '';
  /** Every response a test here saw finish; the last test checks each one's journal. */
  const finished = new Set<string>();

  before(async () => {
    const listening = ctx().hub.app.listen(0, '127.0.0.1');
    server = listening;
    await new Promise<void>((resolve) => listening.once('listening', () => resolve()));
    baseUrl = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  });
  after(async () => {
    const listening = server;
    if (!listening) return;
    listening.closeAllConnections();
    await new Promise<void>((resolve) => listening.close(() => resolve()));
  });

  /** A raw streaming POST /v1/responses (fetch, so the body can be read as it arrives). */
  const startStream = async (body: Record<string, unknown>, signal?: AbortSignal) => {
    const res = await fetch(`${baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { ...ctx().auth, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
      signal,
    });
    assert.equal(res.status, 200, await (res.ok ? Promise.resolve('') : res.text()));
    assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
    return res.body!;
  };

  /** The SSE replay of GET /v1/responses/{id}/events (headers) or ?stream=true (query), checked. */
  const replay = async (path: string, query: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<any[]> => {
    const res = await ctx().http.get(path).query(query).set(ctx().auth).set(headers).timeout(10_000);
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    return parseSse(res.text).map((frame) => {
      assert.equal(frame.id, String(frame.data.sequence_number));
      assert.equal(frame.event, frame.data.type);
      return checkedEvent(frame.data);
    });
  };

  /**
   * The whole journal of a finished response (GET …/events from -1), checked for
   * the invariants: sequences 0..n-1 with no gap, exactly one terminal event, last.
   */
  const journal = async (id: string): Promise<any[]> => {
    const events = await replay(`/v1/responses/${id}/events`, { starting_after: -1 });
    assert.deepEqual(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
      `gap-free journal of ${id}`,
    );
    const terminal = events.filter((e) => TERMINAL_EVENTS.includes(e.type));
    assert.equal(terminal.length, 1, `one terminal event in ${id}: ${events.map((e) => e.type).join(' ')}`);
    assert.equal(events.at(-1), terminal[0], 'the terminal event is the last');
    finished.add(id);
    return events;
  };

  const getResponse = async (id: string) => {
    const res = await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth);
    assertMatchesSpec(res, 'getResponse');
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  const cancel = async (id: string) => {
    const res = await ctx().http.post(`/v1/responses/${id}/cancel`).set(ctx().auth);
    assertMatchesSpec(res, 'cancelResponse');
    return res;
  };

  test('cancelling a streaming response ends it canceled within seconds, its message closed incomplete', async () => {
    const text = words(40);
    await createAgent(ctx, { name: 'talker', model: { provider: 'fake', script: [{ text, delay_ms: 100 }] } });
    // One reader for the whole stream: pulled by hand so it stays open across the cancel.
    const stream = liveEvents(await startStream({ model: 'talker', input: 'talk' }));
    const seen: any[] = [];
    while (seen.filter((e) => e.type === 'response.output_text.delta').length < 3) {
      const next = await stream.next();
      assert.ok(!next.done, 'the stream ended before three deltas');
      seen.push(next.value);
    }
    const id = seen[0].response.id;

    const started = Date.now();
    const res = await cancel(id);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.palai_status, 'canceled');
    assert.ok(Date.now() - started < 5_000, `cancel answered after ${Date.now() - started} ms`);

    for (let next = await stream.next(); !next.done; next = await stream.next()) seen.push(next.value);
    assert.deepEqual(
      seen.map((e) => e.sequence_number),
      seen.map((_, i) => i),
    );
    const terminal = seen.filter((e) => TERMINAL_EVENTS.includes(e.type));
    // The SDKs know no response.cancelled event: the default stream ends a cancel as incomplete, status cancelled.
    assert.deepEqual(
      terminal.map((e) => e.type),
      ['response.incomplete'],
    );
    assert.equal(seen.at(-1).type, 'response.incomplete');
    assert.equal(seen.at(-1).response.status, 'cancelled');
    assert.equal(seen.at(-1).response.palai_status, 'canceled');

    const deltas = seen
      .filter((e) => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('');
    assert.ok(deltas.length > 0 && deltas.length < text.length, `partial text: ${deltas}`);
    const closed = seen.find((e) => e.type === 'response.output_item.done' && e.item.type === 'message');
    assert.equal(closed.item.status, 'incomplete');
    assert.equal(closed.item.content[0].text, deltas);
    assert.equal(
      seen.find((e) => e.type === 'response.output_text.done'),
      undefined,
      'a cut-off text is not announced as done',
    );

    const final = seen.at(-1).response;
    assert.equal(final.palai_status, 'canceled');
    assert.equal(final.output_text, '');
    assert.equal(final.output[0].status, 'incomplete');
    assert.equal(final.output[0].content[0].text, deltas);
    assert.deepEqual(await getResponse(id), final);
    await journal(id);

    const again = await cancel(id);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.palai_status, 'canceled');
    assert.deepEqual(again.body, final, 'cancelling again changes nothing');
    await journal(id);
  });

  test('cancelling a response that waits for a tool ends it canceled at once', async () => {
    await createAgent(ctx, {
      name: 'tool-waiter',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: { q: 1 } }] }] },
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
    });
    const waiting = await respond(ctx, { model: 'tool-waiter', input: 'x' });
    assert.equal(waiting.palai_status, 'waiting_for_tool');
    const res = await cancel(waiting.id);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.palai_status, 'canceled');
    assert.equal(res.body.required_action, null);
    assert.equal(typeof res.body.completed_at, 'number');
    const events = await journal(waiting.id);
    assert.equal(events.at(-1).type, 'response.cancelled');
    const late = await ctx()
      .http.post(`/v1/responses/${waiting.id}/tool_outputs`)
      .set(ctx().auth)
      .send({ outputs: [{ call_id: waiting.required_action.calls[0].call_id, output: 'x' }] });
    assertProblem(late, 409, 'invalid-state');
  });

  test('cancelling a finished response is a 409; an unknown one a 404', async () => {
    await createAgent(ctx, { name: 'echo', model: { provider: 'fake' } });
    const done = await respond(ctx, { model: 'echo', input: 'x' });
    assert.equal(done.status, 'completed');
    const res = await cancel(done.id);
    assertProblem(res, 409, 'invalid-state');
    assert.deepEqual(await getResponse(done.id), done);
    await journal(done.id);
    assertProblem(await cancel('resp_00000000000000000000000000'), 404, 'not-found');
  });

  test('max_steps: a run that needs more model steps fails with limit-exceeded', async () => {
    await createAgent(ctx, {
      name: 'stepper',
      model: { provider: 'fake', script: [echoCall('1'), echoCall('2'), echoCall('3')] },
      tools: [{ type: 'builtin', name: 'echo' }],
      limits: { max_steps: 2 },
    });
    const res = await respond(ctx, { model: 'stepper', input: 'x' });
    assert.equal(res.status, 'failed');
    assert.equal(res.error.code, 'limit-exceeded');
    assert.equal(res.error.type, 'urn:palai:problem:limit-exceeded');
    assert.match(res.error.message, /max_steps/);
    assert.equal(ranCalls(res.output).length, 2, 'two steps ran');
    assert.equal((await journal(res.id)).at(-1).type, 'response.failed');
  });

  test('without max_steps, a model that never stops calling tools ends the run after 100 model calls', async () => {
    await createAgent(ctx, {
      name: 'looper',
      // Every call of the model chooses the same tool call: it never answers.
      model: { provider: 'fake', script_choices: [{ when: {}, step: echoCall('again') }] },
      tools: [{ type: 'builtin', name: 'echo' }],
    });
    const res = await respond(ctx, { model: 'looper', input: 'x' });
    assert.equal(res.status, 'failed');
    assert.equal(res.error.code, 'limit-exceeded');
    assert.match(res.error.message, /max_steps \(100\)/);
    assert.equal(ranCalls(res.output).length, 100);
  });

  test('max_tool_calls: a step proposing more calls than allowed fails the run before any of them runs', async () => {
    await createAgent(ctx, {
      name: 'greedy',
      model: { provider: 'fake', script: [{ tool_calls: [1, 2, 3].map((n) => ({ name: 'echo', arguments: { text: String(n) } })) }, { text: 'done' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      limits: { max_tool_calls: 2 },
    });
    const res = await respond(ctx, { model: 'greedy', input: 'x' });
    assert.equal(res.status, 'failed');
    assert.equal(res.error.code, 'limit-exceeded');
    assert.match(res.error.message, /max_tool_calls/);
    assert.equal(toolResults(res.output).length, 0);
    assert.equal((await journal(res.id)).at(-1).type, 'response.failed');
  });

  test('timeout_seconds: a run past its deadline ends timed_out with response.incomplete', async () => {
    await createAgent(ctx, { name: 'slowpoke', model: { provider: 'fake', script: [{ text: words(30), delay_ms: 200 }] }, limits: { timeout_seconds: 1 } });
    const started = Date.now();
    const res = await respond(ctx, { model: 'slowpoke', input: 'x' });
    assert.ok(Date.now() - started < 4_000, `answered after ${Date.now() - started} ms`);
    assert.equal(res.palai_status, 'timed_out');
    assert.deepEqual(res.incomplete_details, { reason: 'timed_out' });
    assert.equal(res.error.code, 'limit-exceeded');
    assert.equal(res.output_text, '');
    assert.equal(res.output[0].status, 'incomplete');
    const events = await journal(res.id);
    assert.equal(events.at(-1).type, 'response.incomplete');
    assert.equal(events.at(-1).response.palai_status, 'timed_out');
  });

  test('timeout_seconds longer than a timer can hold (over 24.8 days) does not end the run early', async () => {
    await createAgent(ctx, {
      name: 'patient-run',
      model: { provider: 'fake', script: [{ text: 'w1 w2 w3 w4', delay_ms: 30 }] },
      limits: { timeout_seconds: 40 * 24 * 3600 },
    });
    const res = await respond(ctx, { model: 'patient-run', input: 'x' });
    assert.equal(res.status, 'completed', JSON.stringify(res.error));
    assert.equal(res.output_text, 'w1 w2 w3 w4');
  });

  test('timeout_seconds: a response still waiting for a tool at its deadline ends timed_out', async () => {
    await createAgent(ctx, {
      name: 'patient',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: { q: 1 } }] }] },
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
      limits: { timeout_seconds: 1 },
    });
    const waiting = await respond(ctx, { model: 'patient', input: 'x' });
    assert.equal(waiting.palai_status, 'waiting_for_tool');
    let current = waiting;
    // The worker wakes it at the deadline (in_progress for a moment) and ends it.
    for (const until = Date.now() + 6_000; ['waiting_for_tool', 'in_progress'].includes(current.palai_status) && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = await getResponse(waiting.id);
    }
    assert.equal(current.palai_status, 'timed_out');
    assert.deepEqual(current.incomplete_details, { reason: 'timed_out' });
    assert.equal(current.required_action, null);
    assert.equal((await journal(waiting.id)).at(-1).type, 'response.incomplete');
  });

  test('max_total_tokens: a run over its token budget ends budget_exceeded before its next step', async () => {
    await createAgent(ctx, {
      name: 'spender',
      model: { provider: 'fake', script: [echoCall('a long text to echo back'), { text: 'never said' }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      limits: { max_total_tokens: 3 },
    });
    const res = await respond(ctx, { model: 'spender', input: 'one two three four five six' });
    assert.equal(res.palai_status, 'budget_exceeded');
    assert.deepEqual(res.incomplete_details, { reason: 'budget_exceeded' });
    assert.equal(res.error.code, 'limit-exceeded');
    assert.ok(res.usage.total_tokens > 3, JSON.stringify(res.usage));
    assert.equal(res.output_text, '');
    assert.equal(res.output.filter((i: { type: string }) => i.type === 'message').length, 0, 'no step after the budget ran out');
    const events = await journal(res.id);
    assert.equal(events.at(-1).type, 'response.incomplete');
    assert.equal(events.at(-1).response.palai_status, 'budget_exceeded');
  });

  test('max_total_tokens: the one step whose usage passes the budget ends the run budget_exceeded at that step, its answer kept', async () => {
    // The fake model counts the input's 7 words and its 7 deltas: 14 tokens.
    await createAgent(ctx, { name: 'one-step-spender', model: { provider: 'fake' }, limits: { max_total_tokens: 5 } });
    const input = 'one two three four five six seven';
    const res = await respond(ctx, { model: 'one-step-spender', input });
    assert.equal(res.palai_status, 'budget_exceeded');
    assert.equal(res.status, 'incomplete');
    assert.deepEqual(res.incomplete_details, { reason: 'budget_exceeded' });
    assert.equal(res.error.code, 'limit-exceeded');
    assert.equal(res.error.message, 'The token budget of 5 was used up.');
    assert.equal(res.usage.total_tokens, 14);
    assert.equal(res.output_text, input, 'what the model said is kept');
    const events = await journal(res.id);
    assert.equal(
      events.some((e) => e.type === 'response.completed'),
      false,
    );
    assert.equal(events.at(-1).type, 'response.incomplete');

    // Streamed, the stream ends with the same status, after the answer's deltas.
    const streamed = [];
    for await (const event of liveEvents(await startStream({ model: 'one-step-spender', input }))) streamed.push(event);
    assert.equal(streamed.at(-1).type, 'response.incomplete');
    assert.equal(streamed.at(-1).response.palai_status, 'budget_exceeded');
    assert.equal(
      streamed
        .filter((e) => e.type === 'response.output_text.delta')
        .map((e) => e.delta)
        .join(''),
      input,
    );
    await journal(streamed.at(-1).response.id);
  });

  test('max_total_tokens: a run that uses exactly its budget completes', async () => {
    await createAgent(ctx, { name: 'exact-spender', model: { provider: 'fake' }, limits: { max_total_tokens: 14 } });
    const res = await respond(ctx, { model: 'exact-spender', input: 'one two three four five six seven' });
    assert.equal(res.status, 'completed');
    assert.equal(res.usage.total_tokens, 14);
    await journal(res.id);
  });

  const citySchema = { type: 'object', required: ['city'], properties: { city: { type: 'string' } }, additionalProperties: false };

  test('output_schema: a valid JSON answer completes the response', async () => {
    await createAgent(ctx, { name: 'city', model: { provider: 'fake', script: [{ json: { city: 'Oslo' } }] }, output_schema: citySchema });
    const res = await respond(ctx, { model: 'city', input: 'x' });
    assert.equal(res.status, 'completed');
    assert.deepEqual(JSON.parse(res.output_text), { city: 'Oslo' });
    await journal(res.id);
  });

  test('output_schema: an invalid answer gets one repair turn; the repaired answer alone is the output text', async () => {
    await createAgent(ctx, {
      name: 'city-repaired',
      model: { provider: 'fake', script: [{ json: { town: 'Oslo' } }, { json: { city: 'Oslo' } }] },
      output_schema: citySchema,
    });
    const res = await respond(ctx, { model: 'city-repaired', input: 'x' });
    assert.equal(res.status, 'completed');
    assert.deepEqual(JSON.parse(res.output_text), { city: 'Oslo' });
    const messages = res.output.filter((i: { type: string }) => i.type === 'message');
    assert.equal(messages.length, 2);
    assert.equal(messages[0].status, 'incomplete');
    assert.deepEqual(JSON.parse(messages[0].content[0].text), { town: 'Oslo' });
    assert.equal(messages[1].status, 'completed');
    assert.equal(
      res.output.some((i: { role?: string }) => i.role === 'developer'),
      false,
      'the repair request stays out of the output',
    );
    await journal(res.id);
  });

  test('output_schema: an answer still invalid after the repair fails the run with output-invalid', async () => {
    await createAgent(ctx, {
      name: 'city-broken',
      model: { provider: 'fake', script: [{ json: { town: 1 } }, { text: 'still wrong' }] },
      output_schema: citySchema,
    });
    const res = await respond(ctx, { model: 'city-broken', input: 'x' });
    assert.equal(res.status, 'failed');
    assert.equal(res.error.code, 'output-invalid');
    assert.equal(res.error.type, 'urn:palai:problem:output-invalid');
    assert.match(res.error.message, /output_schema/);
    assert.match(res.error.message, /not valid JSON/);
    assert.equal((await journal(res.id)).at(-1).type, 'response.failed');
  });

  test('Last-Event-ID: N on a finished response replays exactly the events after N, ending with the terminal one', async () => {
    await createAgent(ctx, { name: 'resumable', model: { provider: 'fake', script: [{ text: words(8) }] } });
    const done = await respond(ctx, { model: 'resumable', input: 'x' });
    const all = await journal(done.id);
    for (const n of [0, 3, Math.floor(all.length / 2), all.length - 2]) {
      const later = await replay(`/v1/responses/${done.id}/events`, {}, { 'Last-Event-ID': String(n) });
      assert.deepEqual(later, all.slice(n + 1), `after ${n}`);
      assert.equal(later.filter((e) => TERMINAL_EVENTS.includes(e.type)).length, 1);
    }
  });

  test('a reader that disconnects mid-run of a background stream and resumes with starting_after sees what a continuous reader saw', async () => {
    await createAgent(ctx, { name: 'interrupted-reader', model: { provider: 'fake', script: [{ text: words(15), delay_ms: 20 }] } });
    // 15 deltas plus 8 framing events; a disconnect anywhere from the first event to the last few.
    const ks = [1, ...Array.from({ length: 3 }, () => 2 + Math.floor(Math.random() * 19))];
    for (const k of ks) {
      const abort = new AbortController();
      const first: any[] = [];
      // Background: a stream that is not lasts only as long as its connection (a disconnect cancels it, see sse.ts).
      for await (const event of liveEvents(await startStream({ model: 'interrupted-reader', input: 'x', background: true }, abort.signal))) {
        first.push(event);
        if (first.length === k) break;
      }
      abort.abort();
      const id = first[0].response.id;
      const rest = await replay(`/v1/responses/${id}`, { stream: true, starting_after: k - 1 });
      const all = await journal(id);
      assert.deepEqual([...first, ...rest], all, `disconnected after ${k} events`);
      assert.equal(all.at(-1).type, 'response.completed');
    }
  });

  test('every response this suite finished has a gap-free journal with exactly one terminal event', async () => {
    assert.ok(finished.size >= 10, `${finished.size} responses checked`);
    for (const id of finished) await journal(id);
  });

  test('GET /metrics answers Prometheus text without a key', async () => {
    const res = await ctx().http.get('/metrics');
    assertMatchesSpec(res, 'getMetrics');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    for (const name of [
      'palai_responses_finished_total',
      'palai_model_step_seconds',
      'palai_queue_depth',
      'palai_active_streams',
      'palai_lease_takeovers_total',
    ]) {
      assert.match(res.text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    assert.match(res.text, /^palai_responses_finished_total\{status="canceled"\} [1-9]/m);
    assert.match(res.text, /^palai_responses_finished_total\{status="completed"\} [1-9]/m);
  });
});
