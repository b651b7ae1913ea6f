// Resuming an event stream (ARCHITECTURE §3.4): a reader of GET
// /v1/responses/{id}/events that drops its connection resumes with
// Last-Event-ID and sees every event exactly once, in order — after disconnects
// of its own, and across processes dying: the worker running the response
// (another takes over while the api process keeps streaming from the journal)
// and the api process it reads from (restarted, then resumed against).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { random, testSeed } from '../support/seeded-random.js';
import { cleanUpProcesses, freePort } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import {
  API_KEY,
  assertJournal,
  baseOf,
  clusterEnv,
  createAgent,
  createBackground,
  deltasOf,
  getResponse,
  isTerminal,
  kill9,
  launchHub,
  logsOf,
  readEvents,
  readJournal,
  startHub,
  waitUntil,
  words,
  type HubProcess,
  type SseEvent,
} from './cluster.js';

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

const isDelta = (e: SseEvent) => e.event === 'response.output_text.delta';

interface Received {
  event: SseEvent;
  /** Which connection (1, 2, …) delivered it. */
  connection: number;
}

/**
 * A client that reads a response's events from one api address and, whenever
 * the connection breaks or the server ends the stream early, reconnects to the
 * same address with Last-Event-ID until it has the terminal event.
 */
class ResumingReader {
  readonly received: Received[] = [];
  readonly failures: string[] = [];
  private attempts = 0;
  private readonly waiters = new Set<() => void>();
  readonly done: Promise<void>;

  constructor(base: string, responseId: string, signal: AbortSignal) {
    this.done = this.run(base, responseId, signal);
    this.done.catch(() => undefined);
  }

  get events(): SseEvent[] {
    return this.received.map((r) => r.event);
  }

  private async run(base: string, responseId: string, signal: AbortSignal): Promise<void> {
    while (!this.events.some(isTerminal)) {
      signal.throwIfAborted();
      const connection = ++this.attempts;
      const last = this.received.at(-1)?.event.id;
      try {
        for await (const event of readEvents(base, responseId, { lastEventId: last, signal })) {
          this.received.push({ event, connection });
          for (const wake of this.waiters) wake();
        }
      } catch (error) {
        signal.throwIfAborted();
        this.failures.push(`connection ${connection}: ${(error as Error).message}`);
        await sleep(100);
      }
    }
  }

  /** Resolves once the events received so far satisfy `ready`. */
  until(what: string, ready: (events: SseEvent[]) => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!ready(this.events)) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${what}: not within ${timeoutMs} ms; received ${this.events.map((e) => `${e.id}:${e.event}`).join(', ')}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      this.done.then(check, (error) => {
        cleanup();
        reject(error);
      });
      check();
    });
  }
}

describe('resuming event streams [postgres]', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;

  before(async () => {
    database = await freshPostgresDatabase();
  });
  after(async () => {
    cleanUpProcesses();
    await database?.drop();
  });

  test('a reader that disconnects at random sequences and resumes with Last-Event-ID sees every event once, in order', { timeout: 60_000 }, async (t) => {
    const nodes: HubProcess[] = [];
    try {
      const text = words(80);
      const a = await startHub('A', 'all', clusterEnv(database!.url, { PALAI_BOOTSTRAP_API_KEY: API_KEY }));
      nodes.push(a);
      await createAgent(baseOf(a), { name: 'talker', model: { provider: 'fake', script: [{ text, delay_ms: 30 }] } });
      const created = await createBackground(baseOf(a), 'talker', 'talk');

      const seed = testSeed();
      const rand = random(seed);
      const collected: SseEvent[] = [];
      const cuts: number[] = [];
      const deadline = AbortSignal.timeout(30_000);
      while (!collected.some(isTerminal)) {
        // Disconnect after 1–12 events of this connection, a dozen times at most, then read to the end.
        const cutAfter = cuts.length < 12 ? 1 + Math.floor(rand() * 12) : Infinity;
        const connection = new AbortController();
        let read = 0;
        const last = collected.at(-1)?.id;
        for await (const event of readEvents(baseOf(a), created.id, { lastEventId: last, signal: AbortSignal.any([deadline, connection.signal]) })) {
          if (last !== undefined) assert.ok(event.id > last, `resumed after ${last} but got ${event.id}`);
          collected.push(event);
          if (++read >= cutAfter && !isTerminal(event)) {
            cuts.push(event.id);
            connection.abort(); // the fetch is aborted: the reader hangs up mid-stream
            break;
          }
        }
        assert.ok(!deadline.aborted, `reading took over 30 s; got ${collected.length} events`);
      }
      t.diagnostic(`seed ${seed} (PALAI_TEST_SEED replays it): disconnected after sequences ${cuts.join(', ')}`);
      assert.ok(cuts.length >= 3, 'the stream was cut several times');

      const journal = await readJournal(baseOf(a), created.id);
      assertJournal(journal, 'response.completed');
      assert.deepEqual(
        collected.map((e) => e.data),
        journal.map((e) => e.data),
        'the pieces read between disconnects concatenate to the journal',
      );
      assert.equal(deltasOf(collected, collected.find(isDelta)!.data.item_id), text);

      // Resuming at the terminal event ends at once, with nothing.
      const afterEnd: SseEvent[] = [];
      for await (const event of readEvents(baseOf(a), created.id, { lastEventId: journal.at(-1)!.id, signal: AbortSignal.timeout(5_000) }))
        afterEnd.push(event);
      assert.deepEqual(afterEnd, []);
    } catch (error) {
      if (error instanceof Error) error.message += `\n${logsOf(...nodes)}`;
      throw error;
    } finally {
      cleanUpProcesses();
    }
  });

  test(
    'across restarts: the api stream survives the worker being killed, and a reader resumes against a restarted api process',
    { timeout: 150_000 },
    async (t) => {
      const nodes: HubProcess[] = [];
      try {
        const text = words(100);
        const env = clusterEnv(database!.url, { PALAI_BOOTSTRAP_API_KEY: API_KEY });
        const apiPort = await freePort();
        // A runs responses; C only serves HTTP. They start together (one of them bootstraps the store).
        const [a, c] = await Promise.all([startHub('A', 'all', env), startHub('C', 'api', env, apiPort)]);
        nodes.push(a, c);
        const apiBase = baseOf(c);
        await createAgent(apiBase, { name: 'relay', model: { provider: 'fake', script: [{ text, delay_ms: 75 }] } });
        const created = await createBackground(apiBase, 'relay', 'relay it');

        const reader = new ResumingReader(apiBase, created.id, AbortSignal.timeout(90_000));
        await reader.until('A claiming the response, seen through C', (events) => events.some((e) => e.event === 'response.in_progress'), 30_000);
        // A holds the lease now; B starts and, once up, waits for that lease to expire.
        const bLaunch = launchHub('B', 'worker', env);
        await reader.until('A streaming, seen through C', (events) => events.filter(isDelta).length >= 5, 30_000);
        const cutItemId = reader.events.find(isDelta)!.data.item_id as string;
        // Kill A once B is up, or at the latest 60 words into A's 100 (B's start-up is slow on a busy machine).
        await waitUntil('B up or A far into its stream', 60_000, () => bLaunch.isUp() || reader.events.filter(isDelta).length >= 60, 20);
        const bWasRunning = bLaunch.isUp();
        assert.ok(!reader.events.some((e) => e.event === 'response.output_text.done'), 'A was still streaming');
        await kill9(a);
        const killedAt = Date.now();
        const connectionBeforeKill = reader.received.at(-1)!.connection;
        nodes.push(await bLaunch.ready);
        t.diagnostic(`A killed after ${reader.events.filter(isDelta).length} words; B was ${bWasRunning ? 'already running' : 'still starting'}`);

        const takenOver = (events: SseEvent[]) => {
          const closed = events.findIndex((e) => e.event === 'response.output_item.done' && e.data.item.id === cutItemId);
          return closed !== -1 && events.slice(closed).filter(isDelta).length >= 3;
        };
        await reader.until('B taking over, seen through C', takenOver, 60_000);
        t.diagnostic(`C streamed B's first deltas ${Date.now() - killedAt} ms after A was killed`);
        // C kept the same connection open the whole time: what B wrote reached it from the journal.
        assert.deepEqual(
          [...new Set(reader.received.map((r) => r.connection))],
          [connectionBeforeKill],
          `one connection to C so far; failures: ${reader.failures.join('; ')}`,
        );

        // The reader's api process dies; it comes back on the same address and the reader resumes there.
        const beforeRestart = reader.events.length;
        await kill9(c);
        const c2 = await startHub('C2', 'api', env, apiPort);
        nodes.push(c2);
        await waitUntil('the reader finishing', 60_000, async () => {
          await Promise.race([reader.done, sleep(100)]);
          return reader.events.some(isTerminal);
        });
        await reader.done;
        const connections = [...new Set(reader.received.map((r) => r.connection))];
        t.diagnostic(
          `${reader.events.length - beforeRestart} events after C's restart, over connections ${connections.join(', ')}; failed attempts: ${reader.failures.length}`,
        );
        assert.ok(connections.length >= 2, 'the reader resumed over a new connection');
        assert.ok(reader.failures.length >= 1, 'the first connection broke when C died');

        const journal = await readJournal(baseOf(c2), created.id);
        assertJournal(journal, 'response.completed');
        const received = reader.events;
        assertJournal(received, 'response.completed');
        assert.deepEqual(
          received.map((e) => e.data),
          journal.map((e) => e.data),
          'every event once, in order, across both restarts',
        );

        const final = await getResponse(baseOf(c2), created.id);
        assert.equal(final.status, 'completed');
        assert.equal(final.output_text, text);
        assert.deepEqual(
          final.output.map((item: { id: string; status: string }) => item.status),
          ['incomplete', 'completed'],
        );
        assert.equal(final.output[0].id, cutItemId);
        assert.equal(deltasOf(received, final.output[1].id), text);
      } catch (error) {
        if (error instanceof Error) error.message += `\n${logsOf(...nodes)}`;
        throw error;
      } finally {
        cleanUpProcesses();
      }
    },
  );
});
