// `palai nodes` as an operator runs it, beside a spawned `palai serve` on the
// same PostgreSQL: an enrollment token printed once, a node admitted with it
// (through the gateway port, with a real signed identity), listed, shown,
// approved (a command outside the catalog refused, naming it), denied and
// revoked — and the hub's REST API sees each change.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createNodesApi } from '../../core/surfaces/nodes/create-nodes-api.js';
import type { NodesApi } from '../../core/surfaces/nodes/nodes-api.js';
import { PgDb } from '../../core/store/pg-db.js';
import { cleanUpProcesses, runPalai, startPalai, tempDir, userEnv, type Result, type Running } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import { newIdentity, proofFor } from './node-fixtures.js';

const API_KEY = 'palai_sk_nodes_cli_bootstrap_key_0123456789';
const STARTUP_TIMEOUT_MS = 90_000;
const COMMAND_TIMEOUT_MS = 60_000;

const unavailable = await postgresUnavailable();

describe('palai nodes beside a running hub', { skip: unavailable ?? false, timeout: 300_000 }, () => {
  let database: { url: string; drop(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  let hub: Running;
  let base = '';
  let db: PgDb;
  let nodes: NodesApi;

  before(async () => {
    database = await freshPostgresDatabase();
    env = userEnv({ PALAI_DATABASE_URL: database.url, PALAI_BOOTSTRAP_API_KEY: API_KEY, PALAI_HOME: '/nonexistent-palai-home' });
    hub = startPalai(['serve', '--port', '0'], env);
    [, base] = await hub.waitFor(/^Palai listening on (http:\/\/\S+)$/m, STARTUP_TIMEOUT_MS);
    db = new PgDb(database.url, 2);
    nodes = createNodesApi({ db });
  });
  after(async () => {
    hub?.child.kill('SIGTERM');
    await hub?.exited;
    await db?.close();
    cleanUpProcesses();
    await database?.drop();
  });

  const palai = (args: string[]): Promise<Result> => runPalai(['nodes', ...args], env, COMMAND_TIMEOUT_MS);
  const ok = async (args: string[]): Promise<Result> => {
    const result = await palai(args);
    assert.equal(result.code, 0, `palai nodes ${args.join(' ')}: ${result.stdout}${result.stderr}`);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
    return result;
  };
  const rest = async (path: string) => {
    const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${API_KEY}` } });
    assert.equal(res.status, 200, path);
    return (await res.json()) as Record<string, any>;
  };
  const tokenOf = (result: Result) => result.stdout.match(/^Token \(shown once, store it now\): (\S+)$/m)?.[1];

  test('enroll prints a token once; the node it enrolls is pending, listed and shown', async () => {
    const enrolled = await ok(['enroll', '--name', 'laptop', '--max-uses', '2', '--expires-in', '600']);
    const token = tokenOf(enrolled);
    assert.ok(token, enrolled.stdout);
    assert.match(enrolled.stdout, /up to 2 node\(s\)/);
    const listed = await rest('/v1/node_enrollments');
    assert.equal(listed.data.length, 1);
    assert.ok(!JSON.stringify(listed).includes(token), 'the token is never listed');

    const empty = await ok(['list']);
    assert.match(empty.stdout, /No nodes/);

    const box = newIdentity();
    await nodes.nodeGateway.admit(proofFor(box), token);
    const list = await ok(['list']);
    const [header, row, ...rest1] = list.stdout.trim().split('\n');
    assert.match(header, /^ID\s+ALIASES\s+STATE\s+PLATFORM\s+USABLE\s+LAST SEEN$/);
    assert.deepEqual(rest1, []);
    assert.match(row, new RegExp(`^${box.nodeId}\\s+-\\s+pending_pairing\\s+linux/x64`));
    const show = await ok(['show', box.nodeId]);
    assert.match(show.stdout, /state:\s+pending_pairing/);
    assert.match(show.stdout, /shell\.exec\.v1\s+risk privileged/);

    // A command outside the catalog is refused, naming it; nothing changes.
    const outside = await palai(['approve', box.nodeId, '--command', 'files.read.v1']);
    assert.equal(outside.code, 1);
    assert.match(outside.stderr, /files\.read\.v1/);
    assert.doesNotMatch(outside.stderr, /\n\s+at /);
    assert.equal((await rest(`/v1/nodes/${box.nodeId}`)).state, 'pending_pairing');

    const approved = await ok(['approve', box.nodeId, '--command', 'shell.exec.v1', '--alias', 'box', '--display-name', 'Build box']);
    assert.match(approved.stdout, new RegExp(`Approved node ${box.nodeId} \\(box\\) for shell\\.exec\\.v1`));
    const viaRest = await rest('/v1/nodes/box');
    assert.deepEqual(viaRest.usable_commands, ['shell.exec.v1']);
    assert.equal(viaRest.display_name, 'Build box');
    assert.equal(viaRest.state, 'disconnected');

    // The second use of the token enrolls another node, which is denied; a third is refused.
    const other = newIdentity();
    await nodes.nodeGateway.admit(proofFor(other), token);
    const denied = await ok(['deny', other.nodeId]);
    assert.match(denied.stdout, /it is revoked/);
    await assert.rejects(nodes.nodeGateway.admit(proofFor(newIdentity()), token), /enrollment token/);

    const revoked = await ok(['revoke', 'box', '--reason', 'decommissioned']);
    assert.match(revoked.stdout, new RegExp(`Revoked node ${box.nodeId}`));
    const after = await rest(`/v1/nodes/${box.nodeId}`);
    assert.equal(after.state, 'revoked');
    assert.equal(after.revocation_reason, 'decommissioned');
    const revokedList = await ok(['list', '--state', 'revoked']);
    assert.equal(revokedList.stdout.trim().split('\n').length, 3);
  });

  test('an unknown node is one line and exit 1', async () => {
    const missing = await palai(['show', 'nosuch']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No node "nosuch"/);
    const tooLong = await palai(['enroll', '--expires-in', '86401']);
    assert.equal(tooLong.code, 1);
    assert.match(tooLong.stderr, /at most 86400/);
  });
});

describe('palai nodes while palai serve holds the embedded store', { timeout: 300_000 }, () => {
  let env: NodeJS.ProcessEnv;
  let hub: Running;
  let base = '';

  before(async () => {
    env = userEnv({ PALAI_HOME: join(tempDir('palai-nodes-cli-'), 'home'), PALAI_BOOTSTRAP_API_KEY: API_KEY });
    hub = startPalai(['serve', '--port', '0'], env);
    [, base] = await hub.waitFor(/^Palai listening on (http:\/\/\S+)$/m, STARTUP_TIMEOUT_MS);
  });
  after(async () => {
    hub?.child.kill('SIGTERM');
    await hub?.exited;
    cleanUpProcesses();
  });

  test('the commands run on the hub, over its operator socket: enroll prints the token, the API lists the enrollment', async () => {
    const enrolled = await runPalai(['nodes', 'enroll', '--name', 'via-socket'], env, COMMAND_TIMEOUT_MS);
    assert.equal(enrolled.code, 0, enrolled.stderr);
    const token = enrolled.stdout.match(/^Token \(shown once, store it now\): (\S+)$/m)?.[1];
    assert.ok(token, enrolled.stdout);
    const res = await fetch(`${base}/v1/node_enrollments`, { headers: { Authorization: `Bearer ${API_KEY}` } });
    const listed = (await res.json()) as { data: { name: string }[] };
    assert.deepEqual(
      listed.data.map((e) => e.name),
      ['via-socket'],
    );
    assert.ok(!JSON.stringify(listed).includes(token));
    const list = await runPalai(['nodes', 'list'], env, COMMAND_TIMEOUT_MS);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /No nodes/);
  });
});
