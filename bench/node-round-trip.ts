// A companion node's round trip, through real processes: `palai serve` on a
// scratch PostgreSQL database and `palai node run` beside it. A `shell.exec.v1`
// `true` through the durable path (the plan prepared, dispatched and its result
// recorded, by the ledger's own times) against the same command spawned
// locally: p50 and p99, and their ratio. Memory per idle node is
// node-connections.ts. Prints figures; asserts nothing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { record } from './figures.js';
import { BIN, build, call, percentile, ROOT, scratchDatabase, serve, stop, type Served } from './processes.js';

const ROUND_TRIPS = 100;
const IDLE_NODES = 200;

interface Page<T> {
  data: T[];
}
interface NodeView {
  id: string;
  state: string;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (performance.now() > deadline) throw new Error(`never happened: ${what}`);
    await sleep(50);
  }
}

/** `bash -c true`, spawned here: the floor a node's round trip is compared with. */
function localSpawnMs(): number {
  const started = performance.now();
  spawnSync('/bin/bash', ['-c', 'true']);
  return performance.now() - started;
}

async function roundTrips(hub: Served, databaseUrl: string): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'palai-bench-node-'));
  mkdirSync(join(root, 'work'));
  const config = join(root, 'palai-node.yaml');
  writeFileSync(
    config,
    `policy: { allowed_commands: [shell.exec.v1], maximum_risk: privileged, max_timeout_seconds: 60, max_output_bytes: 65536 }\nshell:\n  program: /bin/bash\n  working_scopes: { work: ${JSON.stringify(join(root, 'work'))} }\n`,
  );
  const { token } = await call<{ token: string }>(hub.base, 'POST', '/v1/node_enrollments', {});
  const hubUrl = `${hub.base.replace('http', 'ws')}/v1/nodes/connect`;
  const companion: ChildProcess = spawn(
    process.execPath,
    [BIN, 'node', 'run', '--hub', hubUrl, '--config', config, '--home', join(root, 'home'), '--token', token],
    {
      cwd: ROOT,
      stdio: 'ignore',
    },
  );
  try {
    const pending = await until('the companion pending', async () => (await call<Page<NodeView>>(hub.base, 'GET', '/v1/nodes?state=pending_pairing')).data[0]);
    await call(hub.base, 'POST', `/v1/nodes/${pending.id}/approve`, { aliases: ['bench'], allowed_commands: ['shell.exec.v1'] });
    await until('the companion connected', async () => (await call<NodeView>(hub.base, 'GET', `/v1/nodes/${pending.id}`)).state === 'connected');
    await call(hub.base, 'POST', '/v1/agents', {
      name: 'node-bench',
      tools: [{ type: 'node', node: 'bench' }],
      model: {
        provider: 'fake',
        script: [{ tool_calls: [{ name: 'node__bench__shell_exec', arguments: { script: 'true', working_scope: 'work' } }] }, { text: 'ok' }],
      },
    });
    for (let i = 0; i < 5; i++) await call(hub.base, 'POST', '/v1/responses', { model: 'node-bench', input: 'warm up' });
    for (let i = 0; i < ROUND_TRIPS; i++) await call(hub.base, 'POST', '/v1/responses', { model: 'node-bench', input: 'go' });
    // The ledger's own times (the API shows seconds): prepared, to the result recorded.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const { rows } = await db
      .query<{ ms: number; state: string }>(
        `SELECT state, extract(epoch FROM completed_at - created_at) * 1000 AS ms FROM node_invocations ORDER BY created_at DESC LIMIT $1`,
        [ROUND_TRIPS],
      )
      .finally(() => db.end());
    const failed = rows.find((r) => r.state !== 'succeeded');
    if (failed) throw new Error(`an invocation ended ${failed.state}`);
    const durable = rows.map((r) => Number(r.ms));
    const local = Array.from({ length: ROUND_TRIPS }, localSpawnMs);
    durable.sort((a, b) => a - b);
    local.sort((a, b) => a - b);
    for (const p of [50, 99]) {
      record({ name: `node shell.exec.v1 true round trip, durable, p${p}`, value: percentile(durable, p), unit: 'ms' });
      record({ name: `node shell.exec.v1 true, spawned locally, p${p}`, value: percentile(local, p), unit: 'ms' });
      record({ name: `node round trip over a local spawn, p${p}`, value: percentile(durable, p) / percentile(local, p), unit: '×' });
    }
  } finally {
    companion.kill('SIGTERM');
  }
}

export async function benchNodeRoundTrip(): Promise<void> {
  const database = await scratchDatabase('node_round_trip');
  if (!database) return;
  build();
  let hub: Served | null = null;
  try {
    hub = await serve('all', { PALAI_DATABASE_URL: database.url });
    await roundTrips(hub, database.url);
  } finally {
    if (hub) await stop(hub);
    await database.drop();
  }
}
