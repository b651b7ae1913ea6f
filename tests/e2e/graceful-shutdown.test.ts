// Graceful shutdown across processes on one PostgreSQL database. On SIGTERM a
// process stops claiming and accepting at once and turns /readyz 503; responses
// it runs may finish within PALAI_SHUTDOWN_GRACE_SECONDS; what still runs after
// that is handed back and another process continues it at once (the leases here
// last 60 s, so only a hand-back explains a quick finish); streams end with an
// `error` event saying where to resume, and a waiting synchronous call gets a
// 503 naming its response.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import { cleanUpProcesses, freePort, within } from '../support/cli.js';
import { postgresUnavailable } from '../support/stores.js';
import {
  API_KEY,
  api,
  assertJournal,
  baseOf,
  createAgent,
  createBackground,
  deltasOf,
  logsOf,
  metricValue,
  readEvents,
  readJournal,
  StreamErrorFrame,
  useCluster,
  waitForTerminal,
  waitUntil,
  words,
  type SseEvent,
} from './cluster.js';

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

const LONG_LEASE = '60';
const isDelta = (e: SseEvent) => e.event === 'response.output_text.delta';

/** Reads a stream until it ends; returns its events and the error event that ended it, if one did. */
async function readAll(
  base: string,
  id: string,
  onEvent: (seen: SseEvent[]) => void = () => undefined,
): Promise<{ events: SseEvent[]; ended: StreamErrorFrame | null }> {
  const events: SseEvent[] = [];
  try {
    for await (const event of readEvents(base, id, { signal: AbortSignal.timeout(60_000) })) {
      events.push(event);
      onEvent(events);
    }
    return { events, ended: null };
  } catch (error) {
    if (error instanceof StreamErrorFrame) return { events, ended: error };
    throw error;
  }
}

describe('graceful shutdown', { skip: postgresReason ?? false }, () => {
  const cluster = useCluster({ PALAI_LEASE_SECONDS: LONG_LEASE, PALAI_LOG_LEVEL: 'info' });

  test('responses that finish within the grace period finish on the stopping process; it stops taking work at once', async () => {
    const adminPort = await freePort();
    const stopping = await cluster.start('stopping', 'all', { PALAI_SHUTDOWN_GRACE_SECONDS: '30', PALAI_ADMIN_PORT: String(adminPort) });
    const reader = await cluster.start('reader', 'api');
    const text = words(40);
    await createAgent(baseOf(stopping), { name: 'short', model: { provider: 'fake', script: [{ text, delay_ms: 50 }] } });
    const created = await createBackground(baseOf(stopping), 'short', 'go');
    const seen: SseEvent[] = [];
    const started = readAll(baseOf(reader), created.id, (events) => seen.splice(0, seen.length, ...events));
    await waitUntil('the run streaming', 15_000, () => seen.filter(isDelta).length >= 3);

    stopping.proc.child.kill('SIGTERM');
    const ready = await waitUntil('/readyz turning 503 on the operator port', 10_000, async () => {
      const res = await api(stopping.admin!, 'GET', '/readyz').catch(() => null);
      return res && res.status === 503 ? res : null;
    });
    assert.equal(ready.body.type, 'urn:palai:problem:shutting-down');
    assert.equal((await api(stopping.admin!, 'GET', '/healthz')).status, 200, 'still alive while it drains');
    await waitUntil('the API port refusing new connections', 10_000, async () => {
      try {
        await fetch(`${baseOf(stopping)}/healthz`, { signal: AbortSignal.timeout(2_000) });
        return false;
      } catch {
        return true;
      }
    });

    const code = await within(stopping.proc.exited, 30_000, 'the stopping process exiting');
    assert.equal(code, 0, logsOf(stopping));
    const { events, ended } = await started;
    assert.equal(ended, null, 'the reader on the other process saw a normal end');
    assertJournal(events, 'response.completed');
    const done = await waitForTerminal(baseOf(reader), created.id, 10_000);
    assert.equal(done.output_text, text);
    assert.deepEqual(
      done.output.map((item: { status: string }) => item.status),
      ['completed'],
      'finished by the process that started it: no item was cut off and retried',
    );
    assert.doesNotMatch(stopping.proc.stderr(), /Grace period over/);
  });

  test('responses still running when the grace period ends are handed over at once; streams and waiting calls say where to go', async () => {
    const stopping = await cluster.start('stopping', 'all', { PALAI_SHUTDOWN_GRACE_SECONDS: '1' });
    const reader = await cluster.start('reader', 'api');
    // Long enough (15 s) that both runs are still going after the successor has started, on a busy machine too.
    const text = words(300);
    await createAgent(baseOf(stopping), { name: 'long', model: { provider: 'fake', script: [{ text, delay_ms: 50 }] } });

    // Two runs on the stopping process: one followed by a stream there, one awaited by a synchronous call.
    const streamed = await createBackground(baseOf(stopping), 'long', 'streamed');
    let partial: SseEvent[] = [];
    const stream = readAll(baseOf(stopping), streamed.id, (events) => (partial = [...events]));
    await waitUntil('the streamed run under way', 15_000, () => partial.filter(isDelta).length >= 3);
    const waiting = fetch(`${baseOf(stopping)}/v1/responses`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'long', input: 'waited for' }),
    });
    await sleep(500);

    // The process that will continue them; nothing is claimable for it until a lease is handed back.
    const successor = await cluster.start('successor', 'worker');
    assert.equal(metricValue((await api(successor.admin!, 'GET', '/metrics')).body, 'palai_lease_takeovers_total'), 0);

    stopping.proc.child.kill('SIGTERM');
    const answer = await waiting;
    const body = (await answer.json()) as any;
    assert.equal(answer.status, 503, JSON.stringify(body));
    assert.equal(body.type, 'urn:palai:problem:shutting-down');
    assert.match(answer.headers.get('retry-after') ?? '', /^\d+$/);
    assert.match(body.response_id, /^resp_/, 'the waiting call names its response');

    const { events: firstPart, ended } = await stream;
    assert.ok(ended, 'the stream ended with an error event, not silently');
    assert.equal(ended.data.code, 'shutting-down');
    assert.equal(ended.data.sequence_number, firstPart.at(-1)!.id, 'it names the last sequence sent: the point to resume after');

    const code = await within(stopping.proc.exited, 30_000, 'the stopping process exiting');
    assert.equal(code, 0, logsOf(stopping));
    assert.match(stopping.proc.stderr(), /Grace period over: handing 2 running response\(s\) to other processes/);

    // Leases last 60 s: finishing well within that means they were handed back, not left to expire.
    for (const id of [streamed.id, body.response_id]) {
      const done = await waitForTerminal(baseOf(reader), id, 45_000).catch((error) => assert.fail(`${error}\n${logsOf(reader, stopping, successor)}`));
      assert.equal(done.status, 'completed', `${id}\n${logsOf(stopping, successor)}`);
      assert.equal(done.output_text, text, 'the text once, in the completed item');
      assert.deepEqual(
        done.output.map((item: { status: string }) => item.status),
        ['incomplete', 'completed'],
        'the cut-off item closed, the step retried',
      );
    }
    const metrics = (await api(successor.admin!, 'GET', '/metrics')).body;
    assert.equal(metricValue(metrics, 'palai_lease_takeovers_total'), 2, 'the successor took both over');
    assert.equal(metricValue(metrics, 'palai_responses_finished_total{status="completed"}'), 2);

    // Resumed on another process after the error event's sequence, the two parts are the journal.
    const rest: SseEvent[] = [];
    for await (const event of readEvents(baseOf(reader), streamed.id, { lastEventId: ended.data.sequence_number, signal: AbortSignal.timeout(20_000) }))
      rest.push(event);
    const journal = await readJournal(baseOf(reader), streamed.id);
    assertJournal(journal, 'response.completed');
    assert.deepEqual(
      [...firstPart, ...rest].map((e) => e.data),
      journal.map((e) => e.data),
    );
    const completedItem = journal.findLast((e) => e.event === 'response.output_item.done')!.data.item.id;
    assert.equal(deltasOf(journal, completedItem), text);
  });
});
