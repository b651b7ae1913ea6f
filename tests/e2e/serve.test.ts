// `palai serve` as a user runs it: the real binary in a child process, spoken to
// over real HTTP, stopped with SIGTERM, on the embedded store and on PostgreSQL.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cleanUpProcesses, startPalai, tempDir, userEnv, within, type Running } from '../support/cli.js';
import { parseSse } from '../support/sse.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';

const API_KEY = 'palai_sk_e2e_bootstrap_key_0123456789';
/** The first start of an embedded store runs initdb in WASM, which takes several seconds. */
const STARTUP_TIMEOUT_MS = 90_000;

after(cleanUpProcesses);

function tempHome(): string {
  return join(tempDir('palai-e2e-'), 'home');
}

async function call(base: string, path: string, body?: unknown): Promise<Response> {
  return fetch(base + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
}

/** Health, readiness, an agent, a synchronous and a streamed response, over real HTTP. */
async function exerciseHub(base: string): Promise<void> {
  const health = await call(base, '/healthz');
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
  const ready = await call(base, '/readyz');
  assert.equal(ready.status, 200);
  assert.equal(((await ready.json()) as { status: string }).status, 'ready');

  const agent = await call(base, '/v1/agents', { name: 'echo', model: { provider: 'fake' } });
  assert.equal(agent.status, 201, await agent.clone().text());

  const sync = await call(base, '/v1/responses', { model: 'echo', input: 'hello' });
  assert.equal(sync.status, 200);
  const response = (await sync.json()) as { status: string; output_text: string };
  assert.equal(response.status, 'completed');
  assert.equal(response.output_text, 'hello');

  const streamed = await call(base, '/v1/responses', { model: 'echo', input: 'hello stream', stream: true });
  assert.equal(streamed.status, 200);
  assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
  const frames = parseSse(await streamed.text());
  assert.equal(frames.at(-1)?.data.type, 'response.completed');
  assert.equal(frames.at(-1)?.data.response.output_text, 'hello stream');
}

/** Starts serve, runs the scenario, stops it with SIGTERM and expects a clean exit. */
async function serveScenario(env: NodeJS.ProcessEnv): Promise<Running> {
  const serve = startPalai(['serve', '--port', '0'], env);
  const [, base] = await serve.waitFor(/^Palai listening on (http:\/\/\S+)$/m, STARTUP_TIMEOUT_MS);
  assert.doesNotMatch(base, /:0$/, 'the printed URL carries the real port');
  assert.match(serve.stdout(), /Created project proj_\w+ with the API key from PALAI_BOOTSTRAP_API_KEY/);
  assert.ok(!serve.stdout().includes(API_KEY) && !serve.stderr().includes(API_KEY), 'the bootstrap key is never echoed');
  assert.equal(serve.stdout().match(/Palai listening on/g)?.length, 1);

  await exerciseHub(base);

  serve.child.kill('SIGTERM');
  assert.equal(await within(serve.exited, 20_000, 'shutdown after SIGTERM'), 0, serve.stderr());
  assert.doesNotMatch(serve.stderr(), /\n\s+at /, 'no stack trace');
  return serve;
}

test('palai serve on the embedded store answers over HTTP and releases the store on SIGTERM', { timeout: 180_000 }, async () => {
  const home = tempHome();
  const env = userEnv({ PALAI_HOME: home, PALAI_BOOTSTRAP_API_KEY: API_KEY });
  const serve = await serveScenario(env);
  assert.match(serve.stdout(), /Store: embedded store at /);
  const created = serve.stderr().match(/^Creating the embedded store at (\S+)(?: \(preparing its template first: [^)]*\))? …$/m);
  assert.equal(created?.[1], join(home, 'db'), `the first start says it creates the store: ${serve.stderr()}`);
  assert.deepEqual(
    readdirSync(home).filter((name) => name.endsWith('.lock')),
    [],
    'the lock file was removed',
  );

  // The lock is gone: another process can open the same store right away.
  const migrate = startPalai(['migrate'], env);
  assert.equal(await within(migrate.exited, 60_000, 'palai migrate'), 0, migrate.stderr());
  assert.match(migrate.stdout(), /Up to date/);
  assert.doesNotMatch(migrate.stderr(), /Creating the embedded store/, 'an existing store is not created again');
});

const postgresReason = await postgresUnavailable();

test('palai serve on PostgreSQL answers over HTTP and exits 0 on SIGTERM', { skip: postgresReason ?? false, timeout: 120_000 }, async () => {
  const database = await freshPostgresDatabase();
  try {
    const env = userEnv({ PALAI_HOME: tempHome(), PALAI_DATABASE_URL: database.url, PALAI_BOOTSTRAP_API_KEY: API_KEY });
    const serve = await serveScenario(env);
    assert.match(serve.stdout(), /Store: PostgreSQL at postgres:\/\//);

    const keys = startPalai(['keys', 'list'], env);
    assert.equal(await within(keys.exited, 30_000, 'palai keys list'), 0, keys.stderr());
    assert.match(keys.stdout(), /bootstrap/);
  } finally {
    await database.drop();
  }
});
