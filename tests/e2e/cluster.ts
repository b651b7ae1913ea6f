// Several real `palai serve` processes on one PostgreSQL database, spoken to over
// real HTTP: starting and SIGKILLing them, the few API calls the crash and
// scale-out suites make, and an incremental SSE reader that can be cut off and
// resumed. Used by the e2e suites; not a test file itself.
import { TERMINAL_EXTENDED_EVENTS } from '../../adapters/http/openai-status.js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before } from 'node:test';
import { startPalai, tempDir, userEnv, within, type Running } from '../support/cli.js';
import { freshPostgresDatabase } from '../support/stores.js';
import { assertBodyMatchesSpec } from '../support/spec.js';

export const API_KEY = 'palai_sk_e2e_bootstrap_key_0123456789';
/** `palai serve` compiles its sources with tsx on start; on a busy CI box that takes a few seconds. */
const STARTUP_TIMEOUT_MS = 30_000;
const REQUEST_TIMEOUT_MS = 20_000;

export type Role = 'api' | 'worker' | 'consumers' | 'all';

/**
 * The environment of every process of a cluster: one database, short leases so
 * takeovers are quick, fast polling, quiet logs. `extra` adds or overrides.
 */
export function clusterEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return userEnv({
    PALAI_HOME: join(tempDir('palai-cluster-'), 'home'),
    PALAI_DATABASE_URL: databaseUrl,
    PALAI_LEASE_SECONDS: '2',
    PALAI_POLL_INTERVAL_MS: '200',
    PALAI_LOG_LEVEL: 'warn',
    ...extra,
  });
}

export interface HubProcess {
  name: string;
  role: Role;
  proc: Running;
  /** The HTTP base URL; null for role worker. */
  base: string | null;
  /** Where /metrics, /healthz and /readyz are served when not on `base` (a worker, or PALAI_ADMIN_PORT set). */
  admin: string | null;
}

/** Starts `palai serve --role <role>` and waits until it listens (or, for a worker, runs). */
export async function startHub(name: string, role: Role, env: NodeJS.ProcessEnv, port = 0): Promise<HubProcess> {
  const proc = startPalai(['serve', '--port', String(port), '--role', role], env);
  if (role === 'worker' || role === 'consumers') {
    const [, admin] = await proc.waitFor(
      /^Palai (?:worker|queue consumers) running; \/metrics, \/healthz and \/readyz on (http:\/\/\S+)$/m,
      STARTUP_TIMEOUT_MS,
    );
    return { name, role, proc, base: null, admin };
  }
  const [, base] = await proc.waitFor(/^Palai listening on (http:\/\/\S+)$/m, STARTUP_TIMEOUT_MS);
  const admin = /^Operator endpoints \(\/metrics, \/healthz, \/readyz\) on (http:\/\/\S+)$/m.exec(proc.stdout())?.[1] ?? null;
  return { name, role, proc, base, admin };
}

/** Starts a node without waiting for it; `ready` resolves once it is up (a failure surfaces when awaited). */
export function launchHub(name: string, role: Role, env: NodeJS.ProcessEnv, port = 0): { ready: Promise<HubProcess>; isUp: () => boolean } {
  let up = false;
  const ready = startHub(name, role, env, port).then((node) => {
    up = true;
    return node;
  });
  ready.catch(() => undefined);
  return { ready, isUp: () => up };
}

/** kill -9: no shutdown, no lease handed back. Resolves once the process is gone. */
export async function kill9(node: HubProcess): Promise<void> {
  node.proc.child.kill('SIGKILL');
  await within(node.proc.exited, 10_000, `${node.name} exiting after SIGKILL`);
}

/** Stops a node with SIGTERM (graceful) and expects exit code 0. */
export async function stopHub(node: HubProcess): Promise<void> {
  if (node.proc.child.exitCode !== null || node.proc.child.signalCode !== null) return;
  node.proc.child.kill('SIGTERM');
  const code = await within(node.proc.exited, 20_000, `${node.name} shutting down`);
  assert.equal(code, 0, `${node.name} exit code; stderr: ${node.proc.stderr()}`);
}

export interface Cluster {
  /** The environment of a node on the suite's database, with the bootstrap key; `extra` adds or overrides. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  /** Starts a node that is stopped (SIGTERM) after the current test. */
  start(name: string, role: Role, extra?: Record<string, string>): Promise<HubProcess>;
}

/**
 * Registers the hooks of a suite of processes on one fresh database: the
 * database before the suite, each test's nodes stopped after it (a worker left
 * running would claim the next test's responses), the database dropped at the end.
 */
export function useCluster(defaults: Record<string, string> = {}): Cluster {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>> | null = null;
  const nodes: HubProcess[] = [];
  before(async () => {
    database = await freshPostgresDatabase();
  });
  afterEach(async () => {
    for (const node of nodes.splice(0)) await stopHub(node).catch(() => node.proc.child.kill('SIGKILL'));
  });
  after(async () => {
    await database?.drop();
  });
  const env = (extra: Record<string, string> = {}) => {
    assert.ok(database, 'the cluster database is created before the tests');
    return clusterEnv(database.url, { PALAI_BOOTSTRAP_API_KEY: API_KEY, ...defaults, ...extra });
  };
  return {
    env,
    async start(name, role, extra = {}) {
      const node = await startHub(name, role, env(extra));
      nodes.push(node);
      return node;
    },
  };
}

/** What each process printed, for a failure message. */
export function logsOf(...nodes: HubProcess[]): string {
  return nodes.map((n) => `--- ${n.name} (${n.role}) stdout:\n${n.proc.stdout()}\n--- ${n.name} stderr:\n${n.proc.stderr()}`).join('\n');
}

export function baseOf(node: HubProcess): string {
  assert.ok(node.base, `${node.name} (role ${node.role}) has no HTTP listener`);
  return node.base;
}

/** One JSON request with the bootstrap key; returns status and parsed body. */
export async function api(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${API_KEY}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON (say, /metrics)
  }
  return { status: res.status, body: parsed };
}

export async function createAgent(base: string, spec: Record<string, unknown>): Promise<any> {
  const res = await api(base, 'POST', '/v1/agents', spec);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assertBodyMatchesSpec(res.body, 'createAgent', 201);
  return res.body;
}

/** POST /v1/responses with background: true; answers at once with the queued response. */
export async function createBackground(base: string, agent: string, input: string): Promise<any> {
  const res = await api(base, 'POST', '/v1/responses', { model: agent, input, background: true });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assertBodyMatchesSpec(res.body, 'createResponse', 200);
  assert.equal(res.body.background, true);
  return res.body;
}

export async function getResponse(base: string, id: string): Promise<any> {
  const res = await api(base, 'GET', `/v1/responses/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assertBodyMatchesSpec(res.body, 'getResponse', 200);
  return res.body;
}

/** Polls `check` until it returns something truthy; fails after `timeoutMs` with `what`. */
export async function waitUntil<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/** Polls GET /v1/responses/{id} until it reaches a terminal status. */
export function waitForTerminal(base: string, id: string, timeoutMs: number): Promise<any> {
  return waitUntil(
    `response ${id} reaching a terminal status`,
    timeoutMs,
    async () => {
      const response = await getResponse(base, id);
      return ['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded'].includes(response.palai_status) ? response : null;
    },
    100,
  );
}

export interface SseEvent {
  /** The SSE `id` (the journal sequence). */
  id: number;
  /** The SSE `event` name. */
  event: string;
  data: any;
}

/** A stream the server could not continue ended with an `error` event (no SSE id): where to resume is in `data`. */
export class StreamErrorFrame extends Error {
  constructor(readonly data: { type: 'error'; code: string; message: string; sequence_number: number }) {
    super(`the stream ended with an error event: ${data.code}: ${data.message}`);
    this.name = 'StreamErrorFrame';
  }
}

function parseBlock(block: string): SseEvent | null {
  let id: string | null = null;
  let event: string | null = null;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  if (event === 'error' && id === null) throw new StreamErrorFrame(JSON.parse(data.join('\n')));
  assert.ok(id !== null && /^\d+$/.test(id), `SSE frame without a numeric id: ${block}`);
  assert.ok(event !== null, `SSE frame without an event name: ${block}`);
  return { id: Number(id), event, data: JSON.parse(data.join('\n')) };
}

/**
 * Reads GET /v1/responses/{id}/events as a stream, yielding each complete frame
 * as it arrives (fetch + manual text/event-stream parsing). `lastEventId` sends
 * Last-Event-ID. The generator ends when the server ends the stream; it throws
 * when the connection breaks (the server died) or when the server ended the
 * stream with an `error` event (StreamErrorFrame), and stops quietly when `signal` aborts.
 */
export async function* readEvents(base: string, id: string, options: { lastEventId?: number; signal?: AbortSignal } = {}): AsyncGenerator<SseEvent> {
  const headers: Record<string, string> = { Authorization: `Bearer ${API_KEY}`, Accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['Last-Event-ID'] = String(options.lastEventId);
  // Our own controller: a consumer leaving the loop early hangs up the connection at once.
  const hangUp = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, hangUp.signal]) : hangUp.signal;
  const res = await fetch(`${base}/v1/responses/${id}/events`, { headers, signal });
  if (res.status !== 200) assert.fail(`GET events answered ${res.status}: ${await res.text()}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.ok(res.body, 'an event stream has a body');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame = parseBlock(block);
        if (frame) yield frame;
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  } finally {
    hangUp.abort();
  }
  assert.equal(buffer.trim(), '', 'the stream ended inside a frame');
}

/** The whole journal of a response that has ended: the events stream replays it and closes after the terminal event. */
export async function readJournal(base: string, id: string, timeoutMs = 15_000): Promise<SseEvent[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const events: SseEvent[] = [];
  for await (const event of readEvents(base, id, { signal })) events.push(event);
  assert.ok(!signal.aborted, `reading the journal of ${id} took over ${timeoutMs} ms`);
  return events;
}

/** Collects the events `readEvents` yields until `stop(event)` is true (inclusive); aborts the connection then. */
export async function readUntil(base: string, id: string, stop: (event: SseEvent, seen: SseEvent[]) => boolean, timeoutMs: number): Promise<SseEvent[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const seen: SseEvent[] = [];
  try {
    for await (const event of readEvents(base, id, { signal: abort.signal })) {
      seen.push(event);
      if (stop(event, seen)) break;
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  assert.ok(seen.length > 0 && stop(seen.at(-1)!, seen), `the awaited event did not arrive within ${timeoutMs} ms; saw ${seen.map((e) => e.event).join(', ')}`);
  return seen;
}

/** The REST projection's own list of the events that end a stream (/events speaks Palai's vocabulary), so a duplicate or a missing one is caught. */
export const isTerminal = (event: SseEvent): boolean => (TERMINAL_EXTENDED_EVENTS as ReadonlySet<string>).has(event.event);

/**
 * The journal invariants: sequences 0..n-1 without gap, each SSE id equal to its
 * event's sequence_number and name equal to its type, and exactly one terminal
 * event, the last one, of type `terminal`.
 */
export function assertJournal(events: SseEvent[], terminal = 'response.completed'): void {
  assert.ok(events.length > 0, 'the journal is empty');
  events.forEach((event, index) => {
    assert.equal(event.id, index, `event #${index} has sequence ${event.id}; sequences: ${events.map((e) => e.id).join(',')}`);
    assert.equal(event.data.sequence_number, event.id, 'the SSE id is the sequence_number');
    assert.equal(event.data.type, event.event, 'the SSE event name is the type');
  });
  const terminals = events.filter(isTerminal);
  assert.deepEqual(
    terminals.map((e) => e.event),
    [terminal],
    `exactly one terminal event; got ${terminals.map((e) => `${e.id}:${e.event}`).join(', ')}`,
  );
  assert.equal(events.at(-1)!.event, terminal, 'the terminal event is the last one');
}

/** Concatenated text deltas of one output item. */
export const deltasOf = (events: SseEvent[], itemId: string): string =>
  events
    .filter((e) => e.event === 'response.output_text.delta' && e.data.item_id === itemId)
    .map((e) => e.data.delta)
    .join('');

/** Prometheus text → the value of one sample (`name{labels}`), 0 when absent. */
export function metricValue(text: string, sample: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

/** `n` distinct words: "w0 w1 … w(n-1)". */
export const words = (n: number, prefix = 'w'): string => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');
