// A cluster under fault: three `palai serve` processes on one PostgreSQL
// database — `a` and `b` with role all, `c` with role consumers — take a mixed
// load of REST, A2A, MCP and SQS jobs while `a` is SIGKILLed and started again
// and, at another moment, every PostgreSQL connection is reset; the load runs
// through both, until REST requests were issued with `a` gone and answered
// after the reset, however slow the machine. Afterwards the database itself is read: every response reached one
// terminal event and completed with its answer once, every journal is gap-free
// with the terminal event last, every client key (Idempotency-Key, A2A
// messageId, MCP request, queue job key) names one response, no job is missing
// or doubled, and every job's result reached the reply queue (results are sent
// at least once, so a repeat must be the same delivery). The moments of the
// faults are seeded (PALAI_TEST_SEED replays them).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { TaskState, type Task } from '@a2a-js/sdk';
import {
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { TERMINAL_STATUSES } from '../../core/response-status.js';
import { send, userMessage } from '../a2a/a2a-client.js';
import { brokerUnavailable, createSqsQueue, elasticmqSource, sqsClient, sqsEndpoint } from '../support/brokers.js';
import { cleanUpProcesses } from '../support/cli.js';
import { random, testSeed } from '../support/seeded-random.js';
import { ADMIN_URL, postgresUnavailable } from '../support/stores.js';
import { API_KEY, api, baseOf, createAgent, kill9, logsOf, useCluster, waitUntil, type HubProcess } from './cluster.js';
import { a2aThrough, Balancer, lanes, mcpThrough, quantile, type Timed } from './cluster-load.js';

/** How long the clients keep sending at least; the load also runs through both faults (see `loading`). */
const LOAD_MS = 20_000;
const JOBS = 200;
const LEASE_SECONDS = 2;
const ANSWER = 'all done here thanks';
/** Concurrent clients per surface: enough to keep work in flight on a shared 2-core machine, no more. */
const REST_LANES = 4;
const A2A_LANES = 2;
const MCP_LANES = 2;
/** How long one logical request may take across its retries before it counts as unanswered. */
const GIVE_UP_MS = 60_000;
/** After the reset the load goes on at least this long, so the reset lands under load. */
const AFTER_RESET_MS = 3_000;
/** How long a fault waits for the requests it needs (one issued after it); past it nothing was, and the test says so. */
const FAULT_WAIT_MS = GIVE_UP_MS + 30_000;

const skip = (await postgresUnavailable()) ?? (await brokerUnavailable('sqs'));
const endpoint = skip ? '' : (await sqsEndpoint())!;
let sqs: SQSClient | null = null;

after(() => {
  sqs?.destroy();
  cleanUpProcesses();
});

interface RestCall extends Timed {
  key: string;
  background: boolean;
  /** Every response id an answer named (a 200, or a 503 that says what was admitted). */
  ids: Set<string>;
  status: string | null;
  failure: string | null;
}

interface A2aCall extends Timed {
  messageId: string;
  taskId: string | null;
  state: TaskState | null;
  failure: string | null;
}

interface McpCall extends Timed {
  responseId: string | null;
  text: string | null;
  failure: string | null;
}

interface JobResult {
  responseIds: Set<string>;
  deliveryIds: Set<string>;
  statuses: Set<string>;
  count: number;
}

/** Why a fetch failed, with its cause (undici hides the socket error there). */
const reason = (error: unknown): string => {
  const e = error as Error & { cause?: { code?: string; message?: string } };
  return `${e.message}${e.cause ? ` (${e.cause.code ?? e.cause.message})` : ''}`;
};

/** How Palai's MCP surface answers a call while the database is out of reach (-32603, "retry shortly"). */
const STORE_OUTAGE = /database cannot be reached right now/;

describe('a cluster of three processes under a SIGKILL and a database reset [postgres, sqs]', { skip: skip ?? false }, () => {
  const cluster = useCluster({
    PALAI_LEASE_SECONDS: String(LEASE_SECONDS),
    PALAI_SECRET_KEY: 'e2e-cluster-secret-key-0123456789',
    PALAI_EGRESS_ALLOW_HOSTS: '127.0.0.1',
  });

  test(
    'REST, A2A, MCP and SQS load: every accepted response completes once, journals are whole, no job is lost or doubled',
    { timeout: 240_000 },
    async (t) => {
      const seed = testSeed();
      const rand = random(seed);
      const killAt = 3_000 + Math.floor(rand() * 2_000);
      const resetAt = killAt + 4_000 + Math.floor(rand() * 3_000);
      t.diagnostic(
        `seed ${seed} (PALAI_TEST_SEED replays it): kill a at ${killAt} ms, reset PostgreSQL connections at ${resetAt} ms or once a's successor is up`,
      );

      const testStart = performance.now();
      const databaseUrl = cluster.env().PALAI_DATABASE_URL!;
      const databaseName = new URL(databaseUrl).pathname.slice(1);
      const nodes: HubProcess[] = [];
      const [a, b, c] = await Promise.all([cluster.start('a', 'all'), cluster.start('b', 'all'), cluster.start('c', 'consumers')]);
      nodes.push(a, b, c);
      const balancer = new Balancer();
      balancer.up(a);
      balancer.up(b);

      for (const name of ['rest', 'a2a', 'mcp', 'jobs']) {
        await createAgent(baseOf(a), { name, model: { provider: 'fake', script: [{ text: ANSWER, delay_ms: 20 }] } });
      }
      sqs = sqsClient(endpoint);
      const source = await createSqsQueue(endpoint, `fault-jobs-${process.pid}-${seed}`);
      const reply = await createSqsQueue(endpoint, `fault-results-${process.pid}-${seed}`);
      const consumer = await api(baseOf(a), 'POST', '/v1/queue_consumers', {
        name: 'jobs',
        kind: 'sqs',
        agent: 'jobs',
        max_in_flight: 16,
        ...elasticmqSource(source.url, endpoint, { visibility_seconds: 5 }),
        reply: { queue_url: reply.url },
      });
      assert.equal(consumer.status, 201, JSON.stringify(consumer.body));

      const a2aClients = await Promise.all(Array.from({ length: A2A_LANES }, (_, i) => a2aThrough(balancer, 'a2a', i % 2 === 0 ? 'JSONRPC' : 'HTTP+JSON')));
      const mcpClients = await Promise.all(Array.from({ length: MCP_LANES }, () => mcpThrough(balancer)));

      const rest: RestCall[] = [];
      const a2a: A2aCall[] = [];
      const mcp: McpCall[] = [];
      const results = new Map<string, JobResult>();
      const faults = { killedAt: 0, replacedAt: 0, resetAt: 0, resetConnections: 0 };
      const t0 = performance.now();
      const now = () => performance.now() - t0;
      let faultsOver = false;
      const answeredAfterReset = () => rest.some((call) => call.startedAt > faults.resetAt && call.ids.size > 0);
      /**
       * The load runs for LOAD_MS, through both faults, and after the reset until
       * a REST request issued after it was answered: requests under way at the
       * reset may take seconds more, and a fixed stretch after it could end
       * before any lane was free to issue one.
       */
      const loading = () => {
        if (!faultsOver) return true;
        // The faults failed: their error is the test's.
        if (faults.resetAt === 0) return false;
        const sinceReset = now() - faults.resetAt;
        return now() < LOAD_MS || sinceReset < AFTER_RESET_MS || (!answeredAfterReset() && sinceReset < FAULT_WAIT_MS);
      };

      // ---- the clients ----

      let restSequence = 0;
      const restLane = async () => {
        while (loading()) {
          const i = restSequence++;
          const call: RestCall = {
            key: `rest-${seed}-${i}`,
            background: i % 3 === 2,
            ids: new Set(),
            status: null,
            failure: null,
            startedAt: now(),
            endedAt: 0,
            retries: 0,
          };
          rest.push(call);
          const body = JSON.stringify({ model: 'rest', input: `rest ${i}`, ...(call.background ? { background: true } : {}) });
          for (;;) {
            let retryAfterMs = 200;
            try {
              const res = await balancer.fetch(`${balancer.base()}/v1/responses`, {
                method: 'POST',
                headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json', 'Idempotency-Key': call.key },
                body,
                signal: AbortSignal.timeout(GIVE_UP_MS),
              });
              const answer = (await res.json()) as { id?: string; response_id?: string; status?: string; type?: string };
              if (res.status === 200) {
                call.ids.add(answer.id!);
                call.status = answer.status!;
                break;
              }
              if (answer.response_id) call.ids.add(answer.response_id);
              if (res.status !== 503) {
                call.failure = `${res.status} ${JSON.stringify(answer)}`;
                break;
              }
              retryAfterMs = Math.min(1_000, Number(res.headers.get('retry-after') ?? 1) * 1_000);
            } catch (error) {
              if (now() - call.startedAt > GIVE_UP_MS) {
                call.failure = reason(error);
                break;
              }
            }
            call.retries++;
            await sleep(retryAfterMs);
          }
          call.endedAt = now();
        }
      };

      const a2aLane = async (lane: number) => {
        const client = a2aClients[lane];
        for (let i = 0; loading(); i++) {
          const call: A2aCall = { messageId: randomUUID(), taskId: null, state: null, failure: null, startedAt: now(), endedAt: 0, retries: 0 };
          a2a.push(call);
          const message = userMessage(`a2a ${lane}.${i}`, { messageId: call.messageId });
          for (;;) {
            try {
              const task = (await client.sendMessage(send(message))) as Task;
              call.taskId = task.id;
              call.state = task.status?.state ?? null;
              break;
            } catch (error) {
              // The same messageId again: the first copy's task, never a second one.
              if (now() - call.startedAt > GIVE_UP_MS) {
                call.failure = reason(error);
                break;
              }
              call.retries++;
              await sleep(200);
            }
          }
          call.endedAt = now();
        }
      };

      const mcpLane = async (lane: number) => {
        const client = mcpClients[lane];
        for (let i = 0; loading(); i++) {
          const call: McpCall = { responseId: null, text: null, failure: null, startedAt: now(), endedAt: 0, retries: 0 };
          mcp.push(call);
          for (;;) {
            try {
              const result = await client.callTool({ name: 'mcp', arguments: { input: `mcp ${lane}.${i}` } }, CallToolResultSchema, { timeout: GIVE_UP_MS });
              call.responseId = (result._meta?.['palai/response_id'] as string | undefined) ?? null;
              const content = result.content as Array<{ type: string; text?: string }>;
              call.text = content.map((part) => part.text ?? '').join('');
              if (result.isError) call.failure = `isError: ${call.text}`;
            } catch (error) {
              // Palai's answer to a database outage says to retry: an MCP client does, as a new call.
              if (STORE_OUTAGE.test(reason(error)) && call.retries < 10) {
                call.retries += 1;
                await sleep(200);
                continue;
              }
              // A tools/call has no key of its own to send again under: a call cut
              // off before its stream could be resumed stays unanswered.
              call.failure = reason(error);
            }
            break;
          }
          call.endedAt = now();
        }
      };

      const sendJobs = async () => {
        // Each job once, spread over the load; every tenth sent a second time later.
        const sends = [...Array.from({ length: JOBS }, (_, n) => n), ...Array.from({ length: JOBS / 10 }, (_, n) => n * 10)];
        const batches = Math.ceil(sends.length / 10);
        for (let batch = 0; batch < batches; batch++) {
          await sleep(Math.max(0, (batch * (LOAD_MS - 3_000)) / batches - now()));
          await sqs!.send(
            new SendMessageBatchCommand({
              QueueUrl: source.url,
              Entries: sends
                .slice(batch * 10, batch * 10 + 10)
                .map((n, j) => ({ Id: String(j), MessageBody: JSON.stringify({ input: `job ${n}`, idempotency_key: `job-${seed}-${n}` }) })),
            }),
          );
        }
      };

      let receiving = true;
      const receiveResults = async () => {
        while (receiving) {
          // A receive that fails on the loaded machine is tried again: an unread result stays in the queue.
          const out = await sqs!
            .send(new ReceiveMessageCommand({ QueueUrl: reply.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: ['All'] }))
            .catch(() => sleep(500).then(() => ({ Messages: [] })));
          const messages = out.Messages ?? [];
          for (const m of messages) {
            const result = JSON.parse(m.Body!) as { idempotency_key: string; response_id: string; status: string };
            const seen = results.get(result.idempotency_key) ?? { responseIds: new Set(), deliveryIds: new Set(), statuses: new Set(), count: 0 };
            seen.responseIds.add(result.response_id);
            seen.deliveryIds.add(m.MessageAttributes?.['palai-delivery-id']?.StringValue ?? '?');
            seen.statuses.add(result.status);
            seen.count++;
            results.set(result.idempotency_key, seen);
          }
          if (messages.length > 0) {
            // Deleted once read, or they would come back after their visibility timeout as false repeats.
            await sqs!.send(
              new DeleteMessageBatchCommand({ QueueUrl: reply.url, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
            );
          }
        }
      };

      // ---- the faults ----

      const faultsDone = (async () => {
        await sleep(Math.max(0, killAt - now()));
        balancer.down(a);
        faults.killedAt = now();
        await kill9(a);
        // The successor starts once a REST request was issued with b alone up, however long the requests under way at the kill take.
        await waitUntil('a REST request issued after the kill', FAULT_WAIT_MS, () => rest.some((call) => call.startedAt >= faults.killedAt));
        const replacement = await cluster.start('a2', 'all');
        nodes.push(replacement);
        balancer.up(replacement);
        faults.replacedAt = now();

        await sleep(Math.max(1_000, resetAt - now()));
        const admin = new pg.Client({ connectionString: ADMIN_URL });
        await admin.connect();
        try {
          const { rows } = await admin.query<{ done: boolean }>(
            'SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [databaseName],
          );
          faults.resetConnections = rows.filter((r) => r.done).length;
        } finally {
          await admin.end();
        }
        faults.resetAt = now();
      })().finally(() => {
        faultsOver = true;
      });
      faultsDone.catch(() => undefined);

      const receiver = receiveResults();
      receiver.catch(() => undefined);
      try {
        await Promise.all([lanes(REST_LANES, restLane), lanes(A2A_LANES, a2aLane), lanes(MCP_LANES, mcpLane), sendJobs(), faultsDone]);
        assert.ok(faults.resetConnections > 0, 'the reset cut live connections');
        const loadEndedAt = now();

        // ---- settling ----

        const db = new pg.Client({ connectionString: databaseUrl });
        await db.connect();
        try {
          const settling: string[] = [];
          const phase = async (what: string, timeoutMs: number, check: () => Promise<boolean>) => {
            const from = now();
            await waitUntil(what, timeoutMs, check, 250);
            settling.push(`${what} ${Math.round(now() - from)} ms`);
          };
          await phase('every response terminal', 90_000, async () => {
            const { rows } = await db.query<{ open: number }>('SELECT count(*)::int AS open FROM responses WHERE NOT (status = ANY($1))', [
              [...TERMINAL_STATUSES],
            ]);
            return rows[0].open === 0;
          });
          await phase('every job admitted with its result received', 90_000, async () => {
            const { rows } = await db.query<{ jobs: number }>('SELECT count(*)::int AS jobs FROM queue_jobs');
            return rows[0].jobs >= JOBS && results.size >= JOBS;
          }).catch((error) => {
            throw new Error(`${error.message} (${results.size} of ${JOBS} results)`);
          });
          await phase('the source queue drained', 30_000, async () => {
            const { Attributes } = await sqs!.send(
              new GetQueueAttributesCommand({ QueueUrl: source.url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
            );
            return Number(Attributes?.ApproximateNumberOfMessages) === 0 && Number(Attributes?.ApproximateNumberOfMessagesNotVisible) === 0;
          });
          // A repeated result is sent by the outbox after its first; give one a moment to show.
          await sleep(1_500);
          receiving = false;
          await receiver;
          t.diagnostic(`processes up after ${Math.round(t0 - testStart)} ms; load for ${Math.round(loadEndedAt)} ms; settling: ${settling.join(', ')}`);

          // ---- figures, then the invariants ----

          // The kill window: from the kill until the successor is up and one lease more, by which the dead process's runs are taken over.
          const windowEnd = faults.replacedAt + LEASE_SECONDS * 1_000;
          const duringKill = rest.filter((call) => call.startedAt >= faults.killedAt && call.startedAt <= windowEnd);
          const { rows: totals } = await db.query<{ total: number; completed: number }>(
            "SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'completed')::int AS completed FROM responses",
          );
          const accepted = {
            rest: rest.filter((call) => call.ids.size > 0 && !call.failure).length,
            a2a: a2a.filter((call) => call.taskId).length,
            mcp: mcp.filter((call) => call.responseId).length,
            jobs: JOBS,
          };
          const retried = {
            rest: sum(rest.map((c) => c.retries)),
            a2a: sum(a2a.map((c) => c.retries)),
            mcp: sum(mcp.map((c) => c.retries)),
            mcpResumes: balancer.resumes,
            rerouted: balancer.rerouted,
          };
          const duplicates = sum([...results.values()].map((r) => r.count - 1));
          const { rows: outbox } = await db.query<{ deliveries: number; retried: number; slowest_s: number | null; late: number }>(
            `SELECT count(*)::int AS deliveries, count(*) FILTER (WHERE attempts > 1)::int AS retried,
                  round(max(extract(epoch FROM delivered_at - created_at))::numeric, 1)::float AS slowest_s,
                  count(*) FILTER (WHERE delivered_at - created_at > interval '10 seconds')::int AS late
             FROM outbox_deliveries WHERE consumer = 'queue_reply'`,
          );
          const cutMcp = mcp.filter((call) => cutByTheKill(call, faults.killedAt)).length;
          const figures =
            `cluster under fault (seed ${seed}): accepted ${sum(Object.values(accepted))} (REST ${accepted.rest}, A2A ${accepted.a2a}, MCP ${accepted.mcp}, SQS jobs ${accepted.jobs}); ` +
            `completed ${totals[0].completed} of ${totals[0].total} responses; ` +
            `retried REST ${retried.rest}, A2A ${retried.a2a}, MCP ${retried.mcp}, MCP stream resumes ${retried.mcpResumes} (${cutMcp} calls cut off by the kill before their stream began), refused connections rerouted ${retried.rerouted}; ` +
            `p99 REST latency during the kill ${quantile(duringKill, 0.99)} ms over ${duringKill.length} requests (overall ${quantile(rest, 0.99)} ms over ${rest.length}); ` +
            `SQS jobs ${JOBS} (${JOBS + JOBS / 10} messages), results for ${results.size} jobs (${duplicates} repeated; ${outbox[0].deliveries} result deliveries, ${outbox[0].retried} attempted again, ${outbox[0].late} later than 10 s, the slowest ${outbox[0].slowest_s} s); ` +
            `kill at ${Math.round(faults.killedAt)} ms, successor up at ${Math.round(faults.replacedAt)} ms, ${faults.resetConnections} connections reset at ${Math.round(faults.resetAt)} ms`;
          t.diagnostic(figures);
          console.log(figures);

          const violations = await invariantViolations(db, { rest, a2a, mcp, results, seed, killedAt: faults.killedAt });
          // Only the process the test killed may be gone: a database reset is an interruption, not a reason to exit.
          for (const node of nodes.filter((n) => n !== a && (n.proc.child.exitCode !== null || n.proc.child.signalCode !== null))) {
            const code = node.proc.child.exitCode ?? node.proc.child.signalCode;
            violations.unshift(`process ${node.name} (${node.role}) exited (${code}); its stderr ends:\n${node.proc.stderr().slice(-2500)}`);
          }
          assert.ok(
            violations.length === 0,
            `${violations.length} violations:\n${violations.slice(0, 12).join('\n')}${violations.length > 12 ? `\n… and ${violations.length - 12} more` : ''}`,
          );
          // The load ran through both faults: work was accepted on both sides of each.
          assert.ok(answeredAfterReset(), 'REST requests were answered after the reset');
          assert.ok(duringKill.length > 0, 'REST requests were issued during the kill');
        } finally {
          await db.end();
        }
      } catch (error) {
        if (!(error instanceof Error)) throw error;
        // The processes' lines about the responses the failure names, else the tail of their logs.
        const named = new Set(error.message.match(/resp_[0-9a-z]+/g) ?? []);
        const lines = logsOf(...nodes).split('\n');
        const about = lines
          .filter((line) => [...named].some((id) => line.includes(id)))
          .slice(0, 30)
          .map((line) => (line.length > 700 ? `${line.slice(0, 700)}…` : line));
        throw new Error(
          `${error.message}\n--- what the processes logged${about.length > 0 ? ' about it' : ''}:\n${about.length > 0 ? about.join('\n') : lines.join('\n').slice(-6000)}`,
          { cause: error },
        );
      } finally {
        receiving = false;
        await Promise.all(mcpClients.map((client) => client.close().catch(() => undefined)));
        await Promise.all([source, reply].map((queue) => sqs!.send(new DeleteQueueCommand({ QueueUrl: queue.url })).catch(() => undefined)));
      }
    },
  );
});

const sum = (values: number[]): number => values.reduce((x, y) => x + y, 0);

interface Observed {
  rest: RestCall[];
  a2a: A2aCall[];
  mcp: McpCall[];
  results: Map<string, JobResult>;
  seed: number;
  killedAt: number;
}

/**
 * The invariants, read from the database the cluster shares: every way they
 * fail, so one run shows all of it (the journals of the first few responses
 * in question included).
 */
async function invariantViolations(db: pg.Client, { rest, a2a, mcp, results, seed, killedAt }: Observed): Promise<string[]> {
  const violations: string[] = [];
  const check = (ok: boolean, violation: string) => void (ok || violations.push(violation));
  const sameSet = (actual: Iterable<string>, expected: Iterable<string>, what: string) => {
    const [x, y] = [new Set(actual), new Set(expected)];
    const extra = [...x].filter((v) => !y.has(v));
    const missing = [...y].filter((v) => !x.has(v));
    check(extra.length === 0 && missing.length === 0, `${what}: extra ${extra.join(', ') || 'none'}; missing ${missing.join(', ') || 'none'}`);
  };

  // Every response: completed, one terminal event, the last one, sequences 0..n-1 without gap, and its answer once.
  const { rows: responses } = await db.query<{
    id: string;
    agent: string;
    status: string;
    next_sequence: number;
    events: number;
    first: number | null;
    last: number | null;
    terminals: number;
    terminal_at: number | null;
    output: Array<{ type: string; role?: string; status?: string; content?: Array<{ type: string; text?: string }> }>;
    error: unknown;
  }>(
    `SELECT r.id, a.name AS agent, r.status, r.next_sequence, r.output, r.error,
            count(e.sequence)::int AS events, min(e.sequence) AS first, max(e.sequence) AS last,
            count(*) FILTER (WHERE e.type = 'status' AND e.data->>'status' = ANY($1))::int AS terminals,
            max(e.sequence) FILTER (WHERE e.type = 'status' AND e.data->>'status' = ANY($1)) AS terminal_at
       FROM responses r JOIN agents a ON a.id = r.agent_id LEFT JOIN response_events e ON e.response_id = r.id
      GROUP BY r.id, a.name`,
    [[...TERMINAL_STATUSES]],
  );
  const agentOf = new Map(responses.map((r) => [r.id, r.agent]));
  let journalsShown = 0;
  for (const r of responses) {
    const answered = r.output
      .filter((item) => item.type === 'message' && item.role === 'assistant' && item.status === 'completed')
      .flatMap((item) => item.content ?? [])
      .map((part) => part.text ?? '')
      .join('');
    const problems = [
      r.status !== 'completed' && `it ended ${r.status}: ${JSON.stringify(r.error)}`,
      r.first !== 0 && `its journal starts at ${r.first}`,
      r.events !== (r.last ?? -1) + 1 && `its journal has a gap (${r.events} events, the last ${r.last})`,
      r.next_sequence !== r.events && `its next sequence is ${r.next_sequence}, after ${r.events} events`,
      r.terminals !== 1 && `it has ${r.terminals} terminal events`,
      r.terminal_at !== r.last && `its terminal event is at ${r.terminal_at}, not last (${r.last})`,
      answered !== ANSWER && `its completed answer is ${JSON.stringify(answered)}, not the model's answer once`,
    ].filter(Boolean);
    if (problems.length === 0) continue;
    const journal = journalsShown++ < 3 ? `\n  journal: ${await journalOf(db, r.id)}` : '';
    violations.push(`response ${r.id} (${r.agent}): ${problems.join('; ')}${journal}`);
  }

  // REST: every logical request answered in the end, all answers to one key
  // naming one response, and the REST agent's responses exactly the keys'.
  const httpKeys = await inboxRecords(db, 'http');
  for (const call of rest) {
    check(call.failure === null, `REST ${call.key} was not answered: ${call.failure}`);
    check(call.ids.size === 1, `the answers to REST ${call.key} named ${call.ids.size} responses: ${[...call.ids].join(', ')}`);
    const settled = call.background ? ['queued', 'in_progress', 'completed'].includes(call.status ?? '') : call.status === 'completed';
    check(call.failure !== null || settled, `REST ${call.key} (${call.background ? 'background' : 'sync'}) answered ${call.status}`);
    if (call.ids.size === 1)
      check(
        httpKeys.get(call.key) === [...call.ids][0],
        `Idempotency-Key ${call.key} maps to ${httpKeys.get(call.key)}, not to the response its answers named`,
      );
  }
  sameSet(
    responses.filter((r) => r.agent === 'rest').map((r) => r.id),
    httpKeys.values(),
    'the REST responses are those of the Idempotency-Keys',
  );
  check(new Set(httpKeys.values()).size === httpKeys.size, 'no two Idempotency-Keys share a response');

  // A2A: every message answered with its task, completed; one task per messageId.
  // An A2A inbox key is the messageId and a digest of the message (adapters/a2a/request-handler.ts).
  const a2aKeys = new Map([...(await inboxRecords(db, 'a2a', 'SendMessage'))].map(([key, task]) => [key.replace(/#[0-9a-f]{16}$/, ''), task]));
  for (const call of a2a) {
    check(call.failure === null, `A2A message ${call.messageId} was not answered: ${call.failure}`);
    if (call.taskId === null) continue;
    check(call.state === TaskState.TASK_STATE_COMPLETED, `A2A task ${call.taskId} answered in state ${call.state}`);
    check(
      a2aKeys.get(call.messageId) === call.taskId,
      `A2A messageId ${call.messageId} maps to ${a2aKeys.get(call.messageId)}, not to its task ${call.taskId}`,
    );
  }
  sameSet(
    responses.filter((r) => r.agent === 'a2a').map((r) => r.id),
    a2aKeys.values(),
    'the A2A tasks are those of the messageIds',
  );
  check(new Set(a2aKeys.values()).size === a2aKeys.size, 'no two messageIds share a task');

  // MCP: every call answered (a stream cut by the kill resumed on the other
  // process) with the whole answer, as its own response; every response of the
  // MCP agent belongs to one request of a session.
  const mcpKeys = await inboxRecords(db, 'mcp', 'tools/call');
  const cut = mcp.filter((call) => cutByTheKill(call, killedAt));
  check(cut.length <= MCP_LANES, `${cut.length} MCP calls were cut off by the kill, more than the ${MCP_LANES} in flight`);
  for (const call of mcp) {
    check(call.failure === null || cut.includes(call), `MCP call ${call.responseId ?? '(no response id)'} failed: ${call.failure}`);
    if (call.responseId === null) continue;
    check(call.text === ANSWER, `MCP call of ${call.responseId} answered ${JSON.stringify(call.text)}`);
    check(agentOf.get(call.responseId) === 'mcp', `MCP call answered with ${call.responseId}, not a response of the MCP agent`);
  }
  const mcpIds = mcp.flatMap((c) => (c.responseId ? [c.responseId] : []));
  check(new Set(mcpIds).size === mcpIds.length, 'no two MCP calls got the same response');
  sameSet(
    responses.filter((r) => r.agent === 'mcp').map((r) => r.id),
    mcpKeys.values(),
    'the MCP responses are those of the tools/call requests',
  );
  check(new Set(mcpKeys.values()).size === mcpKeys.size, 'no two tools/call requests share a response');

  // SQS: one response per job, none missing, none doubled; every job's result
  // arrived, and a repeat of one (results are sent at least once) is the same delivery.
  const { rows: jobs } = await db.query<{ idempotency_key: string; response_id: string }>('SELECT idempotency_key, response_id FROM queue_jobs');
  const expected = Array.from({ length: JOBS }, (_, n) => `job-${seed}-${n}`);
  const keys = jobs.map((j) => j.idempotency_key);
  check(keys.length === new Set(keys).size, `a job was admitted twice: ${keys.filter((k, i) => keys.indexOf(k) !== i).join(', ')}`);
  sameSet(keys, expected, 'the admitted jobs are the jobs sent');
  sameSet(
    responses.filter((r) => r.agent === 'jobs').map((r) => r.id),
    jobs.map((j) => j.response_id),
    'the job agent ran the admitted jobs only',
  );
  for (const job of jobs) {
    const result = results.get(job.idempotency_key);
    if (!result) {
      violations.push(`job ${job.idempotency_key} (${job.response_id}) has no result on the reply queue`);
      continue;
    }
    check(
      result.responseIds.size === 1 && result.responseIds.has(job.response_id),
      `the results of ${job.idempotency_key} name ${[...result.responseIds].join(', ')}, not its response ${job.response_id}`,
    );
    check(result.statuses.size === 1 && result.statuses.has('completed'), `the results of ${job.idempotency_key} say ${[...result.statuses].join(', ')}`);
    check(result.deliveryIds.size === 1, `${job.idempotency_key} has results of ${result.deliveryIds.size} deliveries`);
  }
  const unexpected = [...results.keys()].filter((key) => !expected.includes(key));
  check(unexpected.length === 0, `results for jobs never sent: ${unexpected.join(', ')}`);
  return violations;
}

/**
 * A tools/call whose connection died with the killed process before its stream
 * began: the host holds no event id to resume from and no key to send the call
 * again under, so it is unanswered, not lost (what it admitted, if anything,
 * still has to complete like every response).
 */
const cutByTheKill = (call: McpCall, killedAt: number): boolean =>
  call.responseId === null &&
  call.startedAt <= killedAt &&
  call.endedAt >= killedAt &&
  /fetch failed|ECONNRESET|UND_ERR_SOCKET|terminated/.test(call.failure ?? '');

/** A response's journal in one line, for a failure message: sequence, type, and what changed. */
async function journalOf(db: pg.Client, id: string): Promise<string> {
  const { rows } = await db.query<{ sequence: number; type: string; data: any; created_at: Date }>(
    'SELECT sequence, type, data, created_at FROM response_events WHERE response_id = $1 ORDER BY sequence',
    [id],
  );
  return rows
    .map((e) => {
      const detail =
        e.type === 'status'
          ? e.data.status
          : e.type === 'text.delta'
            ? JSON.stringify(e.data.delta)
            : e.data.item
              ? `${e.data.item.id}:${e.data.item.status ?? ''}`
              : '';
      return `${e.sequence}:${e.type}${detail ? `(${detail})` : ''}@${e.created_at.toISOString().slice(17, 23)}`;
    })
    .join(' ');
}

/** The inbox of one surface: key → the response it admitted. */
async function inboxRecords(db: pg.Client, source: string, operation?: string): Promise<Map<string, string>> {
  const { rows } = await db.query<{ key: string; resource_id: string }>(
    `SELECT key, resource_id FROM idempotency_keys WHERE source = $1 AND ($2::text IS NULL OR operation = $2) AND resource_id IS NOT NULL`,
    [source, operation ?? null],
  );
  return new Map(rows.map((r) => [r.key, r.resource_id]));
}
