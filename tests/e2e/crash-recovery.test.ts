// Crash recovery across real processes: a `palai serve` is killed with SIGKILL in
// the middle of a model stream or of a tool call, and another `palai serve` on
// the same PostgreSQL database takes the response over once the lease expires
// and finishes it — text never duplicated within an item, an uncommitted tool
// call retried with the same idempotency key, a committed one never run again,
// and the journal gap-free with exactly one terminal event (ARCHITECTURE §3).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { cleanUpProcesses } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import { ranCalls, toolResults } from '../support/tool-results.js';
import {
  API_KEY,
  api,
  assertJournal,
  baseOf,
  clusterEnv,
  createAgent,
  createBackground,
  deltasOf,
  getResponse,
  kill9,
  launchHub,
  logsOf,
  metricValue,
  readJournal,
  readUntil,
  startHub,
  waitForTerminal,
  waitUntil,
  words,
  type HubProcess,
  type SseEvent,
} from './cluster.js';

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

/**
 * A receiver of http_post effects that deduplicates by Idempotency-Key, as the
 * tool contract asks: every request is logged, the effect is recorded once per
 * key, and the answer comes only after `delayMs`.
 */
class EffectServer {
  readonly requests: { key: string | undefined; body: unknown; at: number }[] = [];
  readonly effects = new Map<string, unknown>();
  answered = 0;
  delayMs = 1500;
  private server: Server | null = null;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const key = req.headers['idempotency-key'] as string | undefined;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
        this.requests.push({ key, body, at: Date.now() });
        const duplicate = key !== undefined && this.effects.has(key);
        if (key !== undefined && !duplicate) this.effects.set(key, body);
        res.on('error', () => undefined);
        setTimeout(() => {
          this.answered++;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ok: true, duplicate }));
        }, this.delayMs).unref();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
  }

  reset(delayMs: number): void {
    this.requests.length = 0;
    this.effects.clear();
    this.answered = 0;
    this.delayMs = delayMs;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/effect`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Runs `body`; on failure, the processes' output is added to the error. */
async function withLogs(nodes: () => HubProcess[], body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (error instanceof Error) error.message += `\n${logsOf(...nodes())}`;
    throw error;
  } finally {
    cleanUpProcesses();
  }
}

const isDelta = (e: SseEvent) => e.event === 'response.output_text.delta';

/**
 * Waits until A has claimed the response (its response.in_progress is in the
 * journal), then starts B. B cannot take a live lease, so A keeps the run; B's
 * start-up overlaps A's work instead of following the kill.
 */
async function launchAfterClaim(a: HubProcess, responseId: string, env: NodeJS.ProcessEnv): Promise<ReturnType<typeof launchHub>> {
  await readUntil(baseOf(a), responseId, (e) => e.event === 'response.in_progress', 30_000);
  return launchHub('B', 'all', env);
}

describe('crash recovery across processes [postgres]', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
  const receiver = new EffectServer();

  before(async () => {
    database = await freshPostgresDatabase();
    await receiver.start();
  });
  after(async () => {
    cleanUpProcesses();
    await receiver.stop();
    await database?.drop();
  });

  const env = (extra: Record<string, string> = {}) => clusterEnv(database!.url, { PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1', ...extra });

  /** A ran call's output, shown as its mcp_call done a second time, with the output. */
  const isOutputDone = (e: SseEvent): boolean => e.event === 'response.output_item.done' && e.data.item.type === 'mcp_call' && e.data.item.output !== null;

  test('kill -9 during a slow model stream: the cut-off item is closed incomplete and the text appears exactly once', { timeout: 120_000 }, async (t) => {
    const nodes: HubProcess[] = [];
    await withLogs(
      () => nodes,
      async () => {
        const text = words(60);
        // Only A runs at first, so A is the worker that claims the response.
        const a = await startHub('A', 'all', env({ PALAI_BOOTSTRAP_API_KEY: API_KEY }));
        nodes.push(a);
        await createAgent(baseOf(a), { name: 'slow-writer', model: { provider: 'fake', script: [{ text, delay_ms: 50 }] } });
        const created = await createBackground(baseOf(a), 'slow-writer', 'go');
        const bLaunch = await launchAfterClaim(a, created.id, env());
        // Kill A mid-stream: once B is up (or, if B starts slowly, halfway through the 60 words).
        const seenBeforeKill = await readUntil(baseOf(a), created.id, (_, seen) => seen.filter(isDelta).length >= (bLaunch.isUp() ? 5 : 30), 30_000);
        const cutItemId = seenBeforeKill.find((e) => e.event === 'response.output_item.added')!.data.item.id as string;
        const bWasUp = bLaunch.isUp();

        await kill9(a);
        const killedAt = Date.now();
        const b = await bLaunch.ready;
        nodes.push(b);
        const final = await waitForTerminal(baseOf(b), created.id, 60_000);
        t.diagnostic(
          `A killed after ${seenBeforeKill.filter(isDelta).length} words with B ${bWasUp ? 'running' : 'still starting'}; B finished ${Date.now() - killedAt} ms later (lease 2 s)`,
        );
        assert.equal(final.status, 'completed', JSON.stringify(final));

        const journal = await readJournal(baseOf(b), created.id);
        assertJournal(journal, 'response.completed');
        // What A journaled before it died is still the start of the journal, unchanged.
        assert.deepEqual(
          journal.slice(0, seenBeforeKill.length).map((e) => e.data),
          seenBeforeKill.map((e) => e.data),
        );
        assert.deepEqual(
          journal.filter((e) => e.event === 'response.created' || e.event === 'response.in_progress').map((e) => e.event),
          ['response.created', 'response.in_progress'],
          'one admission, one run started (a takeover does not start a new one)',
        );

        // The item A was streaming is closed as incomplete, with exactly the text A streamed into it.
        const closed = journal.filter((e) => e.event === 'response.output_item.done' && e.data.item.id === cutItemId);
        assert.equal(closed.length, 1, 'the cut-off item is closed once');
        assert.equal(closed[0].data.item.status, 'incomplete');
        const cutText = closed[0].data.item.content.map((p: { text: string }) => p.text).join('');
        assert.equal(cutText, deltasOf(journal, cutItemId));
        assert.ok(cutText.length > 0 && cutText.length < text.length && text.startsWith(cutText), `A streamed a proper prefix: ${JSON.stringify(cutText)}`);
        assert.equal(
          journal.filter((e) => e.event === 'response.output_text.done' && e.data.item_id === cutItemId).length,
          0,
          'no output_text.done for the cut-off item',
        );

        // The step was retried into a new item, which holds the text once.
        const messages = final.output.filter((item: { type: string }) => item.type === 'message');
        assert.equal(messages.length, 2, JSON.stringify(final.output));
        assert.equal(messages[0].id, cutItemId);
        assert.equal(messages[0].status, 'incomplete');
        const retried = messages[1];
        assert.notEqual(retried.id, cutItemId);
        assert.equal(retried.status, 'completed');
        assert.equal(retried.content.length, 1);
        assert.equal(retried.content[0].text, text);
        assert.equal(deltasOf(journal, retried.id), text, 'the retried item streamed the text once');
        assert.equal(final.output_text, text);
        assert.equal(journal.at(-1)!.data.response.output_text, text, 'the terminal event carries the same answer');
        assert.equal(final.usage.output_tokens, 60, 'usage counts the committed step only');

        const metrics = await api(baseOf(b), 'GET', '/metrics');
        assert.equal(metricValue(metrics.body, 'palai_lease_takeovers_total'), 1, 'B took the response over once');
      },
    );
  });

  test(
    'kill -9 while an uncommitted tool call is in flight: it is retried with the same idempotency key and its effect happens once',
    { timeout: 120_000 },
    async (t) => {
      const nodes: HubProcess[] = [];
      receiver.reset(1500);
      await withLogs(
        () => nodes,
        async () => {
          const a = await startHub('A', 'all', env({ PALAI_BOOTSTRAP_API_KEY: API_KEY }));
          nodes.push(a);
          await createAgent(baseOf(a), {
            name: 'poster',
            model: { provider: 'fake', script: [{ tool_calls: [{ name: 'http_post', arguments: { url: receiver.url, body: { n: 1 } } }] }, { text: 'done' }] },
            tools: [{ type: 'builtin', name: 'http_post' }],
          });
          const created = await createBackground(baseOf(a), 'poster', 'post it');
          const bLaunch = await launchAfterClaim(a, created.id, env());

          // The receiver saw A's request and holds the answer: the call is running, not committed.
          await waitUntil('A sending the tool request', 30_000, () => receiver.requests.length >= 1, 10);
          await kill9(a);
          assert.equal(receiver.answered, 0, 'A was killed before the tool answered');
          const killedAt = Date.now();

          const b = await bLaunch.ready;
          nodes.push(b);
          const final = await waitForTerminal(baseOf(b), created.id, 60_000);
          t.diagnostic(`B finished ${Date.now() - killedAt} ms after the kill; the receiver saw ${receiver.requests.length} request(s)`);
          assert.equal(final.status, 'completed', JSON.stringify(final));

          const calls = ranCalls(final.output);
          assert.equal(calls.length, 1, JSON.stringify(final.output));
          const expectedKey = `${created.id}:${calls[0].approval_request_id}`;
          const keys = new Set(receiver.requests.map((r) => r.key));
          assert.deepEqual([...keys], [expectedKey], 'every request carried the one key <response_id>:<call_id>');
          assert.ok(receiver.requests.length >= 1 && receiver.requests.length <= 2, `at least once, retried at most once: ${receiver.requests.length}`);
          assert.deepEqual(
            receiver.requests.map((r) => r.body),
            receiver.requests.map(() => ({ n: 1 })),
          );
          assert.equal(receiver.effects.size, 1, 'the deduplicated effect happened once');

          const outputs = toolResults(final.output);
          assert.equal(outputs.length, 1, 'exactly one tool output');
          assert.equal(outputs[0].call_id, calls[0].approval_request_id);
          const toolResult = JSON.parse(outputs[0].output);
          assert.equal(toolResult.status, 200);
          // The committed output is the answer to the last attempt: a retry is told it was a duplicate.
          assert.equal(JSON.parse(toolResult.body).duplicate, receiver.requests.length === 2);
          assert.equal(final.output_text, 'done');

          const journal = await readJournal(baseOf(b), created.id);
          assertJournal(journal, 'response.completed');
          const outputEvents = journal.filter(isOutputDone);
          assert.equal(outputEvents.length, 1, 'the tool output was journaled once');
        },
      );
    },
  );

  test(
    "kill -9 during a wake's http_post: the receiver sees one effect by its idempotency key, and the objective's action is succeeded",
    { timeout: 120_000 },
    async () => {
      const nodes: HubProcess[] = [];
      receiver.reset(1500);
      await withLogs(
        () => nodes,
        async () => {
          const a = await startHub('A', 'all', env({ PALAI_BOOTSTRAP_API_KEY: API_KEY }));
          nodes.push(a);
          const base = baseOf(a);
          const agent = await createAgent(base, {
            name: 'wake-poster',
            model: { provider: 'fake', script: [{ tool_calls: [{ name: 'http_post', arguments: { url: receiver.url, body: { n: 1 } } }] }, { text: 'done' }] },
            tools: [{ type: 'builtin', name: 'http_post' }],
          });
          const objective = (await api(base, 'POST', '/v1/objectives', { agent: agent.id, description: 'Post the report.' })).body;
          const document = { objective_scope: 'the report receiver', consequence_classes: ['external_effect'] };
          const draft = (await api(base, 'POST', `/v1/objectives/${objective.id}/policies`, { document })).body;
          assert.equal((await api(base, 'POST', `/v1/objectives/${objective.id}/policies/${draft.version}/approve`, { hash: draft.hash })).status, 200);
          const grant = { type: 'channel', locator: '127.0.0.1', access_mode: 'write' };
          assert.equal((await api(base, 'POST', `/v1/objectives/${objective.id}/grants`, grant)).status, 201);
          const wake = (await api(base, 'POST', `/v1/objectives/${objective.id}/wake`, {})).body;
          assert.equal(wake.outcome, 'admitted', JSON.stringify(wake));
          const bLaunch = await launchAfterClaim(a, wake.response_id, env());

          await waitUntil('A sending the tool request', 30_000, () => receiver.requests.length >= 1, 10);
          await kill9(a);
          assert.equal(receiver.answered, 0, 'A was killed before the tool answered');
          const b = await bLaunch.ready;
          nodes.push(b);
          const final = await waitForTerminal(baseOf(b), wake.response_id, 60_000);
          assert.equal(final.status, 'completed', JSON.stringify(final));
          const [call] = ranCalls(final.output);
          assert.deepEqual(
            [...new Set(receiver.requests.map((r) => r.key))],
            [`${wake.response_id}:${call.approval_request_id}`],
            'every request carried the one key',
          );
          assert.equal(receiver.effects.size, 1, 'the deduplicated effect happened once');
          const actions = (await api(baseOf(b), 'GET', `/v1/objectives/${objective.id}/actions`)).body.data;
          assert.equal(actions.length, 1, JSON.stringify(actions));
          assert.equal(actions[0].id, `${wake.response_id}:${call.approval_request_id}`, 'the retried call is the same action');
          assert.equal(actions[0].status, 'succeeded');
        },
      );
    },
  );

  test('kill -9 after a tool call was committed, during the next slow model step: the tool never runs again', { timeout: 120_000 }, async (t) => {
    const nodes: HubProcess[] = [];
    receiver.reset(200);
    await withLogs(
      () => nodes,
      async () => {
        const answer = words(30, 'a');
        const a = await startHub('A', 'all', env({ PALAI_BOOTSTRAP_API_KEY: API_KEY }));
        nodes.push(a);
        await createAgent(baseOf(a), {
          name: 'poster-then-writer',
          model: {
            provider: 'fake',
            script: [{ tool_calls: [{ name: 'http_post', arguments: { url: receiver.url, body: { n: 1 } } }] }, { text: answer, delay_ms: 100 }],
          },
          tools: [{ type: 'builtin', name: 'http_post' }],
        });
        const created = await createBackground(baseOf(a), 'poster-then-writer', 'post, then write');
        const bLaunch = await launchAfterClaim(a, created.id, env());

        // Wait until the tool's output is in the journal (committed) and the next step is streaming
        // (for a few words once B is up; for half of the 30 if B starts slowly).
        const seen = await readUntil(
          baseOf(a),
          created.id,
          (_, events) => {
            const committed = events.findIndex(isOutputDone);
            return committed !== -1 && events.slice(committed).filter(isDelta).length >= (bLaunch.isUp() ? 3 : 15);
          },
          30_000,
        );
        await kill9(a);
        const killedAt = Date.now();
        assert.equal(receiver.requests.length, 1);
        const cutItemId = seen.filter(isDelta).at(-1)!.data.item_id as string;

        const b = await bLaunch.ready;
        nodes.push(b);
        const final = await waitForTerminal(baseOf(b), created.id, 60_000);
        t.diagnostic(`B finished ${Date.now() - killedAt} ms after the kill`);
        assert.equal(final.status, 'completed', JSON.stringify(final));
        assert.equal(receiver.requests.length, 1, 'the committed tool call was not run again');
        assert.equal(receiver.effects.size, 1);

        assert.deepEqual(
          final.output.map((item: { type: string; status: string }) => `${item.type}:${item.status}`),
          ['mcp_call:completed', 'message:incomplete', 'message:completed'],
        );
        assert.equal(final.output[1].id, cutItemId);
        assert.equal(final.output_text, answer);

        const journal = await readJournal(baseOf(b), created.id);
        assertJournal(journal, 'response.completed');
        assert.equal(journal.filter(isOutputDone).length, 1);
        assert.equal(deltasOf(journal, final.output[2].id), answer);
      },
    );
  });

  test('a stalled worker (SIGSTOP) loses its lease: when it wakes mid-takeover, its late writes are fenced out', { timeout: 120_000 }, async (t) => {
    const nodes: HubProcess[] = [];
    await withLogs(
      () => nodes,
      async () => {
        const text = words(60, 's');
        const a = await startHub('A', 'all', env({ PALAI_BOOTSTRAP_API_KEY: API_KEY }));
        nodes.push(a);
        await createAgent(baseOf(a), { name: 'stalling-writer', model: { provider: 'fake', script: [{ text, delay_ms: 50 }] } });
        const created = await createBackground(baseOf(a), 'stalling-writer', 'go');
        const bLaunch = await launchAfterClaim(a, created.id, env());
        const seenBeforeStop = await readUntil(baseOf(a), created.id, (_, seen) => seen.filter(isDelta).length >= (bLaunch.isUp() ? 5 : 30), 30_000);
        const cutItemId = seenBeforeStop.find(isDelta)!.data.item_id as string;

        // A freezes mid-stream: no heartbeat, no writes, but it is not dead.
        a.proc.child.kill('SIGSTOP');
        const b = await bLaunch.ready;
        nodes.push(b);
        await readUntil(
          baseOf(b),
          created.id,
          (_, events) => {
            const closed = events.findIndex((e) => e.event === 'response.output_item.done' && e.data.item.id === cutItemId);
            return closed !== -1 && events.slice(closed).filter(isDelta).length >= 3;
          },
          60_000,
        );
        // A wakes while B streams the retried step: A's pending delta and heartbeat run now, under a stale lease token.
        a.proc.child.kill('SIGCONT');
        const final = await waitForTerminal(baseOf(b), created.id, 60_000);
        assert.equal(final.status, 'completed', JSON.stringify(final));
        await waitUntil('A giving up the run', 10_000, () => /lease/i.test(a.proc.stdout()));
        t.diagnostic(
          `A's log after waking: ${a.proc
            .stdout()
            .split('\n')
            .filter((l) => /lease/i.test(l))
            .map((l) => JSON.parse(l).msg)
            .join(' | ')}`,
        );

        // A survived and serves the same answer: the run is B's, and nothing A tried after waking was journaled.
        assert.equal((await api(baseOf(a), 'GET', '/healthz')).status, 200);
        const journal = await readJournal(baseOf(a), created.id);
        assertJournal(journal, 'response.completed');
        const closedAt = journal.findIndex((e) => e.event === 'response.output_item.done' && e.data.item.id === cutItemId);
        assert.equal(closedAt === -1, false);
        assert.equal(journal[closedAt].data.item.status, 'incomplete');
        assert.deepEqual(
          journal.slice(closedAt + 1).filter((e) => e.data.item_id === cutItemId || e.data.item?.id === cutItemId),
          [],
          'no event for the item A was streaming after B closed it',
        );
        assert.deepEqual(
          final.output.map((item: { id: string; status: string }) => [item.id === cutItemId, item.status]),
          [
            [true, 'incomplete'],
            [false, 'completed'],
          ],
        );
        assert.equal(final.output_text, text);
        assert.equal(deltasOf(journal, final.output[1].id), text);
        assert.equal((await getResponse(baseOf(a), created.id)).status, 'completed', 'A did not fail or reopen the response');
      },
    );
  });
});
