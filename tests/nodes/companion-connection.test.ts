// The companion's side of the handshake, seen from the socket (a ws server
// here plays the hub's part of the protocol): each hello carries a proof that
// verifies over the challenge's nonce, the enrollment token only until the node
// is paired, and a transient close is followed by a reconnect while a
// permanent one ends the run with exit 1.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import type { NodeHelloFrame } from '../../generated/protocol-schemas.js';
import { NodeHelloFrame as validHello } from '../../generated/protocol-validators.js';
import { catalogHash, descriptorHash } from '../../core/surfaces/nodes/wire/catalog.js';
import { hashedPlan } from '../../core/surfaces/nodes/wire/execution-plan.js';
import { NODE_CLOSE } from '../../core/surfaces/nodes/wire/close-codes.js';
import { proofFault } from '../../core/surfaces/nodes/wire/node-identity.js';
import { cleanUpProcesses, startPalai, tempDir, userEnv } from '../support/cli.js';
import { until } from '../support/until.js';

after(cleanUpProcesses);

interface Hello {
  nonce: string;
  frame: NodeHelloFrame;
}

test('hellos verify over their nonce, carry the token until paired, and a reconnect follows a transient close; 4403 ends with exit 1', async () => {
  const hellos: Hello[] = [];
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  after(() => server.close());
  let connections = 0;
  server.on('connection', (socket: WebSocket) => {
    const nonce = `nonce-${++connections}`;
    const n = connections;
    socket.send(JSON.stringify({ type: 'challenge', nonce, min_protocol: 1, max_protocol: 1, expires_at: new Date(Date.now() + 30_000).toISOString() }));
    socket.once('message', (data) => {
      const frame = JSON.parse(String(data)) as NodeHelloFrame;
      hellos.push({ nonce, frame });
      const nodeId = frame.proof.node_id;
      if (n === 1) {
        socket.send(JSON.stringify({ type: 'admitted', node_id: nodeId, state: 'pending_pairing', allowed_commands: [], approved_catalog_hash: null }));
        socket.send(
          JSON.stringify({ type: 'approved', state: 'connected', allowed_commands: ['shell.exec.v1'], approved_catalog_hash: frame.proof.catalog_hash }),
        );
        setTimeout(() => socket.close(1012, 'restarting'), 50);
      } else if (n === 2) {
        socket.send(
          JSON.stringify({
            type: 'admitted',
            node_id: nodeId,
            state: 'connected',
            allowed_commands: ['shell.exec.v1'],
            approved_catalog_hash: frame.proof.catalog_hash,
          }),
        );
        setTimeout(() => socket.close(NODE_CLOSE.revoked, 'the node was revoked'), 50);
      }
    });
  });
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/nodes/connect`;

  const dir = tempDir('palai-node-conn-');
  const config = join(dir, 'palai-node.yaml');
  writeFileSync(
    config,
    `display_name: Build box\npolicy: { allowed_commands: [shell.exec.v1], maximum_risk: privileged }\nshell: { working_scopes: { repo: ${dir} } }\n`,
  );
  const home = join(dir, 'home');
  const token = 'nen-token-kept-secret-1234567890';
  const node = startPalai(['node', 'run', '--hub', url, '--config', config, '--home', home, '--token', token], userEnv());
  assert.equal(await node.exited, 1, node.stderr());
  await until('two hellos', () => hellos.length === 2);

  for (const { nonce, frame } of hellos) {
    assert.ok(validHello(frame), JSON.stringify(validHello.errors));
    assert.equal(proofFault(frame.proof), null);
    assert.equal(frame.proof.nonce, nonce);
    assert.equal(frame.proof.catalog_hash, catalogHash(frame.proof.catalog));
    assert.equal(frame.proof.display_name, 'Build box');
    assert.ok(!JSON.stringify(frame.proof.catalog).includes(dir), 'no path in the catalog');
  }
  assert.equal(hellos[0].frame.enrollment_token, token);
  assert.equal(hellos[1].frame.enrollment_token, undefined, 'paired: the token is no longer presented');
  assert.equal(hellos[0].frame.proof.node_id, hellos[1].frame.proof.node_id);
  assert.match(node.stderr(), /disconnected \(1012: restarting\); reconnecting in/);
  assert.match(node.stderr(), /refused this node for good \(4403: the node was revoked\)/);
  assert.ok(!node.stderr().includes(token), 'the token is never logged');
  const state = JSON.parse(readFileSync(join(home, 'state.json'), 'utf8'));
  assert.equal(state.paired, true);
  assert.equal(state.hub, url);
  assert.ok(!JSON.stringify(state).includes(token));
});

test('SIGTERM: a plan sent during the drain is NODE_UNAVAILABLE (not run), a command past the grace is stopped and recorded canceled, exit 0', async () => {
  const dir = tempDir('palai-node-drain-');
  const marker = join(dir, 'ran-during-drain');
  const pidFile = join(dir, 'sleep.pid');
  const frames: Array<Record<string, any>> = [];
  let socket: WebSocket | null = null;
  let proof: NodeHelloFrame['proof'] | null = null;
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  after(() => server.close());
  server.on('connection', (ws: WebSocket) => {
    socket = ws;
    ws.send(JSON.stringify({ type: 'challenge', nonce: 'n', min_protocol: 1, max_protocol: 1, expires_at: new Date(Date.now() + 30_000).toISOString() }));
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === 'hello') {
        proof = frame.proof;
        ws.send(
          JSON.stringify({
            type: 'admitted',
            node_id: frame.proof.node_id,
            state: 'connected',
            allowed_commands: ['shell.exec.v1'],
            approved_catalog_hash: frame.proof.catalog_hash,
          }),
        );
      } else if (frame.type !== 'heartbeat') frames.push(frame);
    });
  });
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/nodes/connect`;
  const config = join(dir, 'palai-node.yaml');
  writeFileSync(
    config,
    `policy: { allowed_commands: [shell.exec.v1], maximum_risk: privileged, grace_seconds: 1 }\nshell: { working_scopes: { here: ${dir} } }\n`,
  );
  const node = startPalai(['node', 'run', '--hub', url, '--config', config, '--home', join(dir, 'home'), '--token', 'tok'], userEnv());
  await until('admitted', () => node.stderr().includes('admitted as connected'));

  const plan = (script: string) => {
    const descriptor = proof!.catalog.commands[0];
    const now = Date.now();
    return hashedPlan({
      invocation_id: `ninv_${'0123456789abcdefghjkmnpqrstvwxyz'.slice(0, 20)}${String(frames.length).padStart(6, '0')}`,
      node_id: proof!.node_id,
      command: 'shell.exec.v1',
      descriptor_hash: descriptorHash(descriptor),
      catalog_hash: proof!.catalog_hash,
      input: { script },
      timeout_seconds: 600,
      output_limit_bytes: 1000,
      idempotency_key: `resp_drain:call_${frames.length}`,
      prepared_at: new Date(now).toISOString(),
      expires_at: new Date(now + 300_000).toISOString(),
    });
  };
  const long = plan(`sleep 30 & echo $! > ${pidFile}; wait`);
  socket!.send(JSON.stringify({ type: 'invoke', plan: long }));
  await until('accepted', () => frames.some((f) => f.type === 'invoke.accepted'));
  const pid = Number(await until('the sleep started', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim()));
  node.child.kill('SIGTERM');
  await until('draining', () => node.stderr().includes('received SIGTERM; letting 1 running command(s) finish'));
  const late = plan(`touch ${marker}`);
  socket!.send(JSON.stringify({ type: 'invoke', plan: late }));

  assert.equal(await node.exited, 0, node.stderr());
  const results = frames.filter((f) => f.type === 'invoke.result');
  const lateResult = results.find((f) => f.invocation_id === late.invocation_id);
  assert.equal(lateResult?.failure?.code, 'NODE_UNAVAILABLE');
  assert.equal(existsSync(marker), false);
  const longResult = results.find((f) => f.invocation_id === long.invocation_id);
  assert.equal(longResult?.state, 'canceled');
  assert.equal(longResult?.termination_confirmed, true);
  assert.ok(gone(pid));
  assert.match(node.stderr(), /the grace is over; stopping the commands still running/);
});

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
