// Memory per connected idle node, through the compiled CLI: one `palai serve
// --role api` on a scratch PostgreSQL database (the process measured) and
// PALAI_BENCH_NODES (200) companions reduced to their sockets in this process
// (`ws` clients that answer the challenge with a signed hello, are paired
// through the REST API, and send a heartbeat every 10 s). Figures: the api
// process's RSS with one warm-up node connected and with every node connected
// and idle (/proc/<pid>/status VmRSS), the difference ÷ nodes, and the
// connections the process reports on /metrics. Prints; asserts nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { NodeHubFrame } from '../generated/protocol-schemas.js';
import { catalogHash } from '../core/surfaces/nodes/wire/catalog.js';
import { HEARTBEAT_MS, MAX_PROTOCOL, MIN_PROTOCOL } from '../core/surfaces/nodes/wire/limits.js';
import { generateIdentity, signProof } from '../core/surfaces/nodes/wire/node-identity.js';
import type { NodeCatalog } from '../generated/schemas.js';
import { record } from './figures.js';
import { build, call, rssMb, scratchDatabase, serve, stop } from './processes.js';

const NODES = Number(process.env.PALAI_BENCH_NODES ?? 200);
/** Nodes connecting at once (each is admitted, then paired, before the next of its lane). */
const LANES = 20;
const IDLE_MS = 5_000;

const CATALOG: NodeCatalog = {
  commands: [
    {
      name: 'shell.exec.v1',
      risk: 'privileged',
      description: 'A script through the node’s shell.',
      input_schema: { type: 'object', required: ['script'], properties: { script: { type: 'string' } } },
      max_timeout_seconds: 600,
      max_output_bytes: 262_144,
    },
  ],
};

/** One node: connected, admitted, then approved; resolves with its open socket. */
async function connectNode(base: string, token: string): Promise<WebSocket> {
  const identity = generateIdentity();
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/nodes/connect`);
  ws.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as NodeHubFrame;
      if (frame.type === 'challenge') {
        const proof = signProof(identity.privateKeyPem, {
          node_id: identity.nodeId,
          public_key: identity.publicKey,
          nonce: frame.nonce,
          min_protocol: MIN_PROTOCOL,
          max_protocol: MAX_PROTOCOL,
          client_version: 'bench',
          platform: process.platform,
          architecture: process.arch,
          catalog: CATALOG,
          catalog_hash: catalogHash(CATALOG),
        });
        ws.send(JSON.stringify({ type: 'hello', proof, enrollment_token: token }));
      } else if (frame.type === 'admitted') resolve();
    });
    ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${String(reason)}`)));
  });
  // Paired at once: a project holds at most 128 pending pairings.
  await call(base, 'POST', `/v1/nodes/${identity.nodeId}/approve`, { allowed_commands: ['shell.exec.v1'] });
  return ws;
}

async function connectionsOnMetrics(base: string): Promise<number | null> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const match = /^palai_node_connections (\d+)/m.exec(text);
  return match ? Number(match[1]) : null;
}

export async function benchNodeConnections(): Promise<void> {
  console.log(`\n== node gateway: ${NODES} idle connected nodes ==`);
  build();
  const database = await scratchDatabase('nodes');
  if (!database) {
    record({ name: 'node gateway: memory per connected idle node', value: null, unit: 'KiB', note: 'PostgreSQL unreachable' });
    return;
  }
  const served = await serve('api', { PALAI_DATABASE_URL: database.url });
  const sockets: WebSocket[] = [];
  const beat = setInterval(() => {
    for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.send('{"type":"heartbeat"}');
  }, HEARTBEAT_MS);
  try {
    const { token } = await call<{ token: string }>(served.base, 'POST', '/v1/node_enrollments', { max_uses: NODES + 1 });
    sockets.push(await connectNode(served.base, token));
    await sleep(IDLE_MS);
    const before = rssMb(served.child.pid!);
    const lane = async (count: number) => {
      for (let i = 0; i < count; i++) sockets.push(await connectNode(served.base, token));
    };
    await Promise.all(Array.from({ length: LANES }, (_, i) => lane(Math.floor(NODES / LANES) + (i < NODES % LANES ? 1 : 0))));
    await sleep(IDLE_MS);
    const after = rssMb(served.child.pid!);
    const open = sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length;
    const reported = await connectionsOnMetrics(served.base);
    record({ name: 'node gateway: api RSS with 1 node connected', value: before, unit: 'MB' });
    record({ name: `node gateway: api RSS with ${NODES + 1} nodes connected and idle`, value: after, unit: 'MB' });
    record({
      name: 'node gateway: memory per connected idle node',
      value: ((after - before) * 1024) / NODES,
      unit: 'KiB',
      note: `${open} sockets open, ${reported ?? '?'} connections on /metrics`,
    });
    if (open !== NODES + 1 || reported !== NODES + 1) console.log(`finding: ${NODES + 1} nodes connected, ${open} still open, /metrics reports ${reported}`);
  } finally {
    clearInterval(beat);
    for (const ws of sockets) ws.terminate();
    await stop(served);
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchNodeConnections();
