// Database faults under a real `palai serve` on PostgreSQL, reached through a
// TCP proxy that resets connections or takes the database away: the process
// never dies, no run fails for it (a step cut off is closed `incomplete` and
// retried, as after a crash), and clients can tell an outage from an ending —
// a synchronous call answers 503 store-unavailable with Retry-After, a stream
// ends with an `error` event carrying the sequence to resume after.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { random, testSeed } from '../support/seeded-random.js';
import { cleanUpProcesses } from '../support/cli.js';
import { ADMIN_URL, freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import {
  API_KEY,
  api,
  assertJournal,
  baseOf,
  clusterEnv,
  createAgent,
  createBackground,
  isTerminal,
  logsOf,
  metricValue,
  readEvents,
  readJournal,
  startHub,
  StreamErrorFrame,
  waitForTerminal,
  waitUntil,
  words,
  type HubProcess,
  type SseEvent,
} from './cluster.js';

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

interface ReadOutcome {
  events: SseEvent[];
  /** The error events that ended a connection early, in order. */
  errors: StreamErrorFrame['data'][];
}

/**
 * Reads a response's events to its terminal event the way a careful client
 * does: after an `error` event it resumes after the sequence the event names,
 * after a refused or broken connection it tries again with the last id it has.
 */
async function readResuming(base: string, id: string, timeoutMs: number): Promise<ReadOutcome> {
  const outcome: ReadOutcome = { events: [], errors: [] };
  const deadline = Date.now() + timeoutMs;
  while (!outcome.events.some(isTerminal)) {
    assert.ok(
      Date.now() < deadline,
      `reading ${id} to its end took over ${timeoutMs} ms; got ${outcome.events.length} events, errors ${JSON.stringify(outcome.errors)}`,
    );
    const last = outcome.events.at(-1)?.id;
    try {
      for await (const event of readEvents(base, id, { lastEventId: last, signal: AbortSignal.timeout(20_000) })) outcome.events.push(event);
    } catch (error) {
      if (error instanceof StreamErrorFrame) {
        outcome.errors.push(error.data);
        assert.equal(error.data.sequence_number, outcome.events.at(-1)?.id ?? -1, 'the error event names the last sequence this client received');
      }
      await sleep(200);
    }
  }
  return outcome;
}

/** The text of the completed assistant messages of a response: what its output_text says. */
const completedText = (response: any): string =>
  response.output
    .filter((item: any) => item.type === 'message' && item.status === 'completed')
    .flatMap((item: any) => item.content.map((part: any) => part.text))
    .join('');

describe('database faults under a running palai serve', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let proxy: TcpProxy;
  let node: HubProcess;
  const text = words(60);

  before(async () => {
    database = await freshPostgresDatabase();
    const target = new URL(ADMIN_URL);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    node = await startHub('faulty', 'all', clusterEnv(proxy.urlFor(database.url), { PALAI_BOOTSTRAP_API_KEY: API_KEY, PALAI_LOG_LEVEL: 'info' }));
    await createAgent(baseOf(node), { name: 'talker', model: { provider: 'fake', script: [{ text, delay_ms: 40 }] } });
  });

  after(async () => {
    node?.proc.child.kill('SIGKILL');
    await proxy?.close();
    await database?.drop();
  });

  test('three connection resets under running streams: the process lives, no run fails, every stream resumes to the end', async (t) => {
    const base = baseOf(node);
    const seed = testSeed();
    const rand = random(seed);
    const created = await Promise.all(Array.from({ length: 6 }, (_, i) => createBackground(base, 'talker', `run ${i}`)));
    const readers = created.map((r) => readResuming(base, r.id, 90_000));
    // Awaited below; a process that died must fail the test there, not as a stray rejection.
    for (const reader of readers) reader.catch(() => undefined);

    const pauses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const pause = 300 + Math.floor(rand() * 600);
      pauses.push(pause);
      await sleep(pause);
      proxy.resetAll();
    }
    t.diagnostic(`seed ${seed} (PALAI_TEST_SEED replays it): reset all connections after pauses of ${pauses.join(', ')} ms`);
    await sleep(200);
    assert.equal(node.proc.child.exitCode, null, `the process survived the resets\n${logsOf(node)}`);
    assert.equal(proxy.resets, 3, 'each reset cut live connections');

    const outcomes = await Promise.all(readers);
    assert.equal(node.proc.child.exitCode, null, `the process is alive\n${logsOf(node)}`);
    for (const [index, response] of created.entries()) {
      const settled = await waitForTerminal(base, response.id, 30_000);
      assert.equal(settled.status, 'completed', `response ${index} ${response.id} completed: ${JSON.stringify(settled.error)}\n${logsOf(node)}`);
      assert.equal(settled.output_text, text, 'its output text is the answer exactly once');
      assert.equal(completedText(settled), text);
      const journal = await readJournal(base, response.id);
      assertJournal(journal, 'response.completed');
      assert.deepEqual(
        outcomes[index].events.map((e) => e.data),
        journal.map((e) => e.data),
        'what the resuming reader got, across its reconnects, is the journal exactly once',
      );
      for (const item of settled.output) assert.ok(item.status === 'completed' || item.status === 'incomplete', `item status ${item.status}`);
    }
    assert.doesNotMatch(node.proc.stdout() + node.proc.stderr(), /run failed unexpectedly/, 'no run was failed for the database error');
  });

  test('an outage: a synchronous call answers 503 store-unavailable with Retry-After, streams end with an error event, and every run completes once the database is back', async () => {
    const base = baseOf(node);
    const streamed = await createBackground(base, 'talker', 'streamed');
    // Read a few events so the stream has a position to resume from.
    const firstPart: SseEvent[] = [];
    const reader = readEvents(base, streamed.id, { signal: AbortSignal.timeout(30_000) });
    let streamError: StreamErrorFrame | null = null;
    const draining = (async () => {
      try {
        for await (const event of reader) firstPart.push(event);
      } catch (error) {
        if (error instanceof StreamErrorFrame) streamError = error;
        else throw error;
      }
    })();
    await waitUntil('a few deltas streamed', 15_000, () => firstPart.filter((e) => e.event === 'response.output_text.delta').length >= 3);

    // A synchronous call admitted before the outage, still waiting for its run.
    const waiting = fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'talker', input: 'sync' }),
    });
    // Admission takes milliseconds; the run then streams for seconds.
    await sleep(700);

    proxy.takeDown();
    try {
      const refused = await api(base, 'POST', '/v1/responses', { model: 'talker', input: 'during the outage' });
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.type, 'urn:palai:problem:store-unavailable');
      assert.equal(refused.body.response_id, undefined, 'nothing was admitted');

      const res = await waiting;
      const body = (await res.json()) as any;
      assert.equal(res.status, 503, JSON.stringify(body));
      assert.equal(body.type, 'urn:palai:problem:store-unavailable');
      assert.match(res.headers.get('retry-after') ?? '', /^\d+$/, 'Retry-After says when to try again');
      assert.match(body.response_id, /^resp_/, 'the admitted response is named, so the client fetches it instead of sending again');
      const syncId: string = body.response_id;

      await draining;
      assert.ok(streamError, 'the stream ended with an error event, not a clean end');
      const frame = (streamError as StreamErrorFrame).data;
      assert.equal(frame.code, 'store-unavailable');
      assert.equal(frame.sequence_number, firstPart.at(-1)!.id, 'the error event carries the last sequence sent');
      assert.ok(!firstPart.some(isTerminal), 'the stream had not ended');

      const ready = await api(base, 'GET', '/readyz');
      assert.equal(ready.status, 503, 'not ready while the database is away');
      await sleep(1500);
      assert.equal(node.proc.child.exitCode, null, 'alive through the outage');

      proxy.up();
      for (const id of [streamed.id, syncId]) {
        const settled = await waitForTerminal(base, id, 60_000);
        assert.equal(settled.status, 'completed', `${id}: ${JSON.stringify(settled.error)}\n${logsOf(node)}`);
        assert.equal(settled.output_text, text);
      }
      // Resumed after the error event's sequence, the two parts are the journal exactly once.
      const journal = await readJournal(base, streamed.id);
      assertJournal(journal, 'response.completed');
      const resumed = await collectAfter(base, streamed.id, frame.sequence_number);
      assert.deepEqual(
        [...firstPart, ...resumed].map((e) => e.data),
        journal.map((e) => e.data),
      );

      const metrics = await api(base, 'GET', '/metrics');
      assert.ok(metricValue(metrics.body, 'palai_run_store_interruptions_total') >= 1, 'the interruption was counted');
    } finally {
      proxy.up();
    }
  });
});

/** Every event after `sequence`, to the terminal one. */
async function collectAfter(base: string, id: string, sequence: number): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readEvents(base, id, { lastEventId: sequence, signal: AbortSignal.timeout(20_000) })) events.push(event);
  return events;
}
