// A2A while the database is away, under a real `palai serve` whose PostgreSQL
// is reached through a TCP proxy that takes it down: every call, over both
// bindings, in A2A 1.0 and 0.3, through the official SDK client and as raw
// HTTP, answers HTTP 503 with Retry-After and an error that says the service
// is unavailable (JSON-RPC -32603 with the problem in `data`; HTTP+JSON
// google.rpc UNAVAILABLE) — streaming calls too, before their stream starts,
// and calls admitted before the outage that were waiting for their run. Once
// the database is back, the same calls work.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { cleanUpProcesses } from '../support/cli.js';
import { ADMIN_URL, freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { API_KEY, api, baseOf, clusterEnv, createAgent, logsOf, startHub, waitUntil, words, type HubProcess } from '../e2e/cluster.js';
import { a2aClient, BINDINGS, send, userMessage, type Binding } from './a2a-client.js';

const postgresReason = await postgresUnavailable();

after(cleanUpProcesses);

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const RETRY_INFO = 'type.googleapis.com/google.rpc.RetryInfo';

/** One A2A call as raw HTTP: where, how, and in which protocol version. */
interface RawCall {
  name: string;
  binding: 'jsonrpc' | 'rest';
  version: '1.0' | '0.3';
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  stream?: boolean;
}

const message = (text: string, extra: Record<string, unknown> = {}) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra });
/** A message in 0.3's JSON-RPC shape, and in 0.3's HTTP+JSON (proto JSON) shape. */
const legacyMessage = (text: string) => ({ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] });
const legacyRestMessage = (text: string) => ({ messageId: randomUUID(), role: 'ROLE_USER', content: [{ text }] });
const rpc = (id: number, method: string, params: unknown) => ({ jsonrpc: '2.0', id, method, params });

/** Every A2A operation a client sends without waiting for a run, on both bindings, in both versions. */
function rawCalls(agent: string, taskId: string): RawCall[] {
  const jsonrpc = `/a2a/${agent}/jsonrpc`;
  const rest = `/a2a/${agent}/rest`;
  return [
    {
      name: 'JSON-RPC SendMessage',
      binding: 'jsonrpc',
      version: '1.0',
      method: 'POST',
      path: jsonrpc,
      body: rpc(1, 'SendMessage', { message: message('during') }),
    },
    { name: 'JSON-RPC GetTask', binding: 'jsonrpc', version: '1.0', method: 'POST', path: jsonrpc, body: rpc(2, 'GetTask', { id: taskId }) },
    { name: 'JSON-RPC ListTasks', binding: 'jsonrpc', version: '1.0', method: 'POST', path: jsonrpc, body: rpc(3, 'ListTasks', {}) },
    { name: 'JSON-RPC CancelTask', binding: 'jsonrpc', version: '1.0', method: 'POST', path: jsonrpc, body: rpc(4, 'CancelTask', { id: taskId }) },
    {
      name: 'JSON-RPC SendStreamingMessage',
      binding: 'jsonrpc',
      version: '1.0',
      method: 'POST',
      path: jsonrpc,
      body: rpc(5, 'SendStreamingMessage', { message: message('during') }),
      stream: true,
    },
    {
      name: 'JSON-RPC SubscribeToTask',
      binding: 'jsonrpc',
      version: '1.0',
      method: 'POST',
      path: jsonrpc,
      body: rpc(6, 'SubscribeToTask', { id: taskId }),
      stream: true,
    },
    {
      name: 'JSON-RPC 0.3 message/send',
      binding: 'jsonrpc',
      version: '0.3',
      method: 'POST',
      path: jsonrpc,
      body: rpc(7, 'message/send', { message: legacyMessage('during') }),
    },
    { name: 'JSON-RPC 0.3 tasks/get', binding: 'jsonrpc', version: '0.3', method: 'POST', path: jsonrpc, body: rpc(8, 'tasks/get', { id: taskId }) },
    {
      name: 'JSON-RPC 0.3 message/stream',
      binding: 'jsonrpc',
      version: '0.3',
      method: 'POST',
      path: jsonrpc,
      body: rpc(9, 'message/stream', { message: legacyMessage('during') }),
      stream: true,
    },
    {
      name: 'JSON-RPC 0.3 tasks/resubscribe',
      binding: 'jsonrpc',
      version: '0.3',
      method: 'POST',
      path: jsonrpc,
      body: rpc(10, 'tasks/resubscribe', { id: taskId }),
      stream: true,
    },
    { name: 'HTTP+JSON message:send', binding: 'rest', version: '1.0', method: 'POST', path: `${rest}/message:send`, body: { message: message('during') } },
    { name: 'HTTP+JSON GET task', binding: 'rest', version: '1.0', method: 'GET', path: `${rest}/tasks/${taskId}` },
    { name: 'HTTP+JSON list tasks', binding: 'rest', version: '1.0', method: 'GET', path: `${rest}/tasks` },
    { name: 'HTTP+JSON cancel', binding: 'rest', version: '1.0', method: 'POST', path: `${rest}/tasks/${taskId}:cancel`, body: {} },
    {
      name: 'HTTP+JSON message:stream',
      binding: 'rest',
      version: '1.0',
      method: 'POST',
      path: `${rest}/message:stream`,
      body: { message: message('during') },
      stream: true,
    },
    { name: 'HTTP+JSON subscribe', binding: 'rest', version: '1.0', method: 'POST', path: `${rest}/tasks/${taskId}:subscribe`, body: {}, stream: true },
    {
      name: 'HTTP+JSON 0.3 message:send',
      binding: 'rest',
      version: '0.3',
      method: 'POST',
      path: `${rest}/v1/message:send`,
      body: { message: legacyRestMessage('during') },
    },
    { name: 'HTTP+JSON 0.3 GET task', binding: 'rest', version: '0.3', method: 'GET', path: `${rest}/v1/tasks/${taskId}` },
    {
      name: 'HTTP+JSON 0.3 message:stream',
      binding: 'rest',
      version: '0.3',
      method: 'POST',
      path: `${rest}/v1/message:stream`,
      body: { message: legacyRestMessage('during') },
      stream: true,
    },
    { name: 'HTTP+JSON 0.3 subscribe', binding: 'rest', version: '0.3', method: 'POST', path: `${rest}/v1/tasks/${taskId}:subscribe`, body: {}, stream: true },
  ];
}

/** The calls that read only agents: the card, the list of cards. */
const cardCalls = (agent: string): RawCall[] => [
  { name: 'agent card', binding: 'rest', version: '1.0', method: 'GET', path: `/a2a/${agent}/.well-known/agent-card.json` },
  { name: 'agent card list', binding: 'rest', version: '1.0', method: 'GET', path: '/a2a/' },
];

interface Answer {
  status: number;
  retryAfter: string | null;
  contentType: string;
  body: any;
}

async function sendRaw(base: string, call: RawCall): Promise<Answer> {
  const headers: Record<string, string> = { Authorization: `Bearer ${API_KEY}`, Accept: call.stream ? 'text/event-stream' : 'application/json' };
  if (call.version === '1.0') headers['A2A-Version'] = '1.0';
  if (call.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(base + call.path, {
    method: call.method,
    headers,
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // an event stream, or a text body: kept as text for the failure message
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), contentType: res.headers.get('content-type') ?? '', body };
}

/** The google.rpc details an unavailable answer carries: the problem in ErrorInfo's metadata, when to retry in RetryInfo. */
function assertUnavailableDetails(details: unknown, what: string): void {
  assert.ok(Array.isArray(details), `${what}: the details are a list: ${JSON.stringify(details)}`);
  const info = details.find((d) => d['@type'] === ERROR_INFO);
  assert.equal(info?.metadata?.palai_problem, 'store-unavailable', `${what}: ErrorInfo names the problem: ${JSON.stringify(details)}`);
  const retry = details.find((d) => d['@type'] === RETRY_INFO);
  assert.match(retry?.retryDelay ?? '', /^\d+s$/, `${what}: RetryInfo says when to retry: ${JSON.stringify(details)}`);
}

/** 503, Retry-After, and the binding's own "unavailable" error; never -32600 or a stream. */
function assertUnavailable(call: RawCall, answer: Answer): void {
  const what = `${call.name}: ${answer.status} ${JSON.stringify(answer.body)}`;
  assert.equal(answer.status, 503, what);
  assert.match(answer.retryAfter ?? '', /^\d+$/, `${what}: Retry-After says when to try again`);
  assert.match(answer.contentType, /json/, `${what}: a JSON answer, not a stream`);
  if (call.binding === 'jsonrpc') {
    assert.equal(answer.body.jsonrpc, '2.0', what);
    assert.equal(answer.body.error.code, -32603, `${what}: an internal error, not "Invalid Request"`);
    assert.match(answer.body.error.message, /database cannot be reached/, what);
    assertUnavailableDetails(answer.body.error.data, what);
  } else if (call.version === '0.3') {
    // HTTP+JSON 0.3 answers with a JSON-RPC error object.
    assert.equal(answer.body.code, -32603, what);
    assert.match(answer.body.message, /database cannot be reached/, what);
    assertUnavailableDetails(answer.body.data, what);
  } else {
    assert.equal(answer.body.error.code, 503, what);
    assert.equal(answer.body.error.status, 'UNAVAILABLE', what);
    assert.match(answer.body.error.message, /database cannot be reached/, what);
    assertUnavailableDetails(answer.body.error.details, what);
  }
}

/** What the SDK client threw for a call during the outage: the binding's unavailable error. */
function assertSdkUnavailable(binding: Binding, error: any, what: string): void {
  if (binding === 'JSONRPC') {
    assert.equal(error.envelopeCode, -32603, `${what}: ${error.message}`);
    assertUnavailableDetails(error.data, what);
  } else {
    assert.equal(error.statusCode, 503, `${what}: ${error.message}`);
    assert.match(error.headers?.['retry-after'] ?? '', /^\d+$/, `${what}: Retry-After reached the client`);
  }
  assert.match(error.message, /database cannot be reached/, what);
}

/** The first event of a stream (the task), or the error the stream failed with before it. */
async function firstEvent<T>(stream: AsyncGenerator<T>): Promise<T> {
  const first = await stream.next();
  await stream.return(undefined);
  assert.ok(!first.done, 'the stream had an event');
  return first.value;
}

describe('A2A during a database outage', { skip: postgresReason ?? false }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let proxy: TcpProxy;
  let node: HubProcess;
  let base: string;
  let clients: Record<Binding, Client>;
  let finished: Task;

  before(async () => {
    database = await freshPostgresDatabase();
    const target = new URL(ADMIN_URL);
    proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
    // A statement that waits for a lock gives up after a second (lock_not_available), as the second test needs.
    node = await startHub('a2a-outage', 'all', clusterEnv(proxy.urlFor(database.url), { PALAI_BOOTSTRAP_API_KEY: API_KEY, PGOPTIONS: '-c lock_timeout=1000' }));
    base = baseOf(node);
    await createAgent(base, { name: 'talker', model: { provider: 'fake', script: [{ text: 'at your service' }] } });
    // A run that streams for half a minute: its callers are still waiting when the database goes, and its writes meet the outage.
    await createAgent(base, { name: 'ponderer', model: { provider: 'fake', script: [{ text: words(100), delay_ms: 300 }] } });
    clients = { JSONRPC: await a2aClient(base, 'talker', API_KEY, 'JSONRPC'), 'HTTP+JSON': await a2aClient(base, 'talker', API_KEY, 'HTTP+JSON') };
    finished = (await clients.JSONRPC.sendMessage(send(userMessage('before')))) as Task;
    assert.equal(finished.status?.state, TaskState.TASK_STATE_COMPLETED);
  });

  after(async () => {
    node?.proc.child.kill('SIGKILL');
    await proxy?.close();
    await database?.drop();
  });

  test(
    'every call during the outage answers 503 with Retry-After and the unavailable error; once the database is back, every call works',
    { timeout: 120_000 },
    async () => {
      // Calls admitted before the outage, waiting for their run when it starts.
      const waiting: RawCall[] = [
        {
          name: 'JSON-RPC SendMessage (waiting)',
          binding: 'jsonrpc',
          version: '1.0',
          method: 'POST',
          path: '/a2a/ponderer/jsonrpc',
          body: rpc(1, 'SendMessage', { message: message('ponder') }),
        },
        {
          name: 'JSON-RPC 0.3 message/send (waiting)',
          binding: 'jsonrpc',
          version: '0.3',
          method: 'POST',
          path: '/a2a/ponderer/jsonrpc',
          body: rpc(2, 'message/send', { message: legacyMessage('ponder') }),
        },
        {
          name: 'HTTP+JSON message:send (waiting)',
          binding: 'rest',
          version: '1.0',
          method: 'POST',
          path: '/a2a/ponderer/rest/message:send',
          body: { message: message('ponder') },
        },
        {
          name: 'HTTP+JSON 0.3 message:send (waiting)',
          binding: 'rest',
          version: '0.3',
          method: 'POST',
          path: '/a2a/ponderer/rest/v1/message:send',
          body: { message: legacyRestMessage('ponder') },
        },
      ];
      const answers = waiting.map((call) => sendRaw(base, call));
      for (const answer of answers) answer.catch(() => undefined);
      await waitUntil('the waiting calls admitted', 15_000, async () => {
        const { body } = await api(base, 'GET', '/v1/responses?agent=ponderer&limit=10');
        return body.data?.length === waiting.length && body.data.every((r: { status: string }) => r.status === 'in_progress');
      });

      proxy.takeDown();
      try {
        for (const [index, call] of waiting.entries()) assertUnavailable(call, await answers[index]);
        for (const call of [...rawCalls('talker', finished.id), ...cardCalls('talker')]) assertUnavailable(call, await sendRaw(base, call));
        for (const binding of BINDINGS) {
          const client = clients[binding];
          await assert.rejects(
            client.sendMessage(send(userMessage('during'))),
            (error) => (assertSdkUnavailable(binding, error, `[${binding}] sendMessage`), true),
          );
          await assert.rejects(
            client.getTask({ tenant: '', id: finished.id }),
            (error) => (assertSdkUnavailable(binding, error, `[${binding}] getTask`), true),
          );
          await assert.rejects(
            firstEvent(client.sendMessageStream(send(userMessage('during')))),
            (error) => (assertSdkUnavailable(binding, error, `[${binding}] sendMessageStream`), true),
          );
          await assert.rejects(
            firstEvent(client.resubscribeTask({ tenant: '', id: finished.id })),
            (error) => (assertSdkUnavailable(binding, error, `[${binding}] resubscribeTask`), true),
          );
        }
        assert.equal(node.proc.child.exitCode, null, `alive through the outage\n${logsOf(node)}`);
      } finally {
        proxy.up();
      }

      await waitUntil('the hub ready again', 30_000, async () => (await api(base, 'GET', '/readyz')).status === 200, 100);
      for (const binding of BINDINGS) {
        const task = (await clients[binding].sendMessage(send(userMessage('after')))) as Task;
        assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, `[${binding}] a message after the outage completes`);
        assert.equal((await clients[binding].getTask({ tenant: '', id: task.id })).id, task.id);
        const first = await firstEvent(clients[binding].sendMessageStream(send(userMessage('after'))));
        assert.equal(first.payload?.$case, 'task', `[${binding}] a stream after the outage starts with its task`);
      }
      // The raw calls get their usual answers (a finished task cannot be canceled or subscribed to: those are A2A errors of their own).
      for (const call of [...rawCalls('talker', finished.id), ...cardCalls('talker')]) {
        const answer = await sendRaw(base, call);
        const what = `${call.name} after the outage: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
        assert.ok(answer.status < 500, what);
        assert.ok(![-32600, -32603].includes(answer.body?.error?.code ?? answer.body?.code), what);
      }
    },
  );

  test('a call whose key and agent were found but whose task store cannot answer is a 503 too, before its stream starts', { timeout: 120_000 }, async () => {
    // The responses table locked away (as a long migration would): every read of a task waits, then gives up.
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE responses IN ACCESS EXCLUSIVE MODE');
      const calls = rawCalls('talker', finished.id);
      const answers = await Promise.all(calls.map((call) => sendRaw(base, call)));
      for (const [index, call] of calls.entries()) assertUnavailable(call, answers[index]);
      for (const binding of BINDINGS) {
        const client = clients[binding];
        await assert.rejects(
          firstEvent(client.sendMessageStream(send(userMessage('locked out')))),
          (error) => (assertSdkUnavailable(binding, error, `[${binding}] sendMessageStream`), true),
        );
        await assert.rejects(
          firstEvent(client.resubscribeTask({ tenant: '', id: finished.id })),
          (error) => (assertSdkUnavailable(binding, error, `[${binding}] resubscribeTask`), true),
        );
      }
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    for (const binding of BINDINGS) {
      const first = await firstEvent(clients[binding].sendMessageStream(send(userMessage('unlocked'))));
      assert.equal(first.payload?.$case, 'task', `[${binding}] a stream once the table is free starts with its task`);
    }
  });
});
