// `palai` commands while `palai serve` holds the embedded store: they reach the
// hub over its operator socket (PALAI_HOME/palai.sock) and answer exactly as
// they do once the hub has stopped; the commands that cannot run beside a hub
// say so in one line; a socket left by a killed hub, or one another user could
// have planted, is never used.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cleanUpProcesses, ROOT, runPalai, startPalai, tempDir, userEnv, within, type Result, type Running } from '../support/cli.js';

const API_KEY = 'palai_sk_socket_bootstrap_key_0123456789';
/** The first start of an embedded store may run initdb in WASM. */
const STARTUP_TIMEOUT_MS = 90_000;
const COMMAND_TIMEOUT_MS = 60_000;
const ECHO_FILE = join(ROOT, 'examples/agents/echo.yaml');
/** Another user's id, for the sockets and directories that must not be trusted. */
const NOBODY = 65_534;
const asRoot = process.getuid?.() === 0;

after(cleanUpProcesses);

let home = '';
let socket = '';
let env: NodeJS.ProcessEnv = {};
let hub: Running | null = null;
let api = '';

before(() => {
  home = join(tempDir('palai-socket-'), 'home');
  socket = join(home, 'palai.sock');
  env = userEnv({ PALAI_HOME: home, PALAI_BOOTSTRAP_API_KEY: API_KEY });
});

async function startHub(extra: NodeJS.ProcessEnv = {}): Promise<Running> {
  const serve = startPalai(['serve', '--port', '0'], { ...env, ...extra });
  [, api] = await serve.waitFor(/^Palai listening on (http:\/\/\S+)$/m, STARTUP_TIMEOUT_MS);
  assert.match(serve.stdout(), new RegExp(`^Operator socket: ${socket} \\(palai commands on this store run through it\\)$`, 'm'));
  return serve;
}

function palai(args: string[], input?: string): Promise<Result> {
  return runPalai(args, env, COMMAND_TIMEOUT_MS, input);
}

/** The commands a user runs against a store, read-only or refused, so that each gives the same answer twice. */
const REPEATABLE: { args: string[]; input?: string }[] = [
  { args: ['projects', 'list'] },
  { args: ['keys', 'list'] },
  { args: ['agents', 'apply', '-f', ECHO_FILE] },
  // Relative to the caller's working directory (the repository root), and from stdin.
  { args: ['agents', 'apply', '-f', 'examples/agents/echo.yaml'] },
  { args: ['agents', 'apply', '-f', '-'], input: readFileSync(ECHO_FILE, 'utf8') },
  { args: ['doctor'] },
  { args: ['outbox', 'list', '--json'] },
  { args: ['keys', 'create', '--project', 'nope'] },
  { args: ['projects', 'create', 'Bad Name'] },
  { args: ['keys', 'revoke'] },
  { args: ['agents', 'apply', '-f', 'no-such-file.yaml'] },
];

async function runRepeatable(): Promise<Result[]> {
  const results: Result[] = [];
  for (const { args, input } of REPEATABLE) results.push(await palai(args, input));
  return results;
}

const storeBusy = /The embedded store is open in process \d+/;

describe('palai commands while palai serve holds the embedded store', { timeout: 600_000 }, () => {
  let throughHub: Result[] = [];

  test('serve offers its operator socket in the data directory, to its own user only', async () => {
    hub = await startHub();
    const stat = lstatSync(socket);
    assert.ok(stat.isSocket());
    assert.equal(stat.mode & 0o777, 0o600);
    assert.equal(stat.uid, process.getuid?.());
  });

  test('store commands run through the hub: keys it creates work on its API at once, and agents apply reads the caller’s file', async () => {
    const created = await palai(['keys', 'create', '--name', 'ci']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stderr, '');
    const [, secret] =
      /^Created API key key_\w+ \(ci\) for project proj_\w+ \(default\)\.\nSecret \(shown once, store it now\): (palai_sk_\S+)\n$/.exec(created.stdout) ?? [];
    assert.ok(secret, created.stdout);

    const applied = await palai(['agents', 'apply', '-f', ECHO_FILE]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout, 'created echo (revision 1)\ncreated storyteller (revision 1)\n');

    const agents = await fetch(`${api}/v1/agents`, { headers: { Authorization: `Bearer ${secret}` } });
    assert.equal(agents.status, 200);
    const names = ((await agents.json()) as { data: { name: string }[] }).data.map((a) => a.name).sort();
    assert.deepEqual(names, ['echo', 'storyteller']);
  });

  test('their output and exit codes through the hub are those they give with the hub stopped', async () => {
    throughHub = await runRepeatable();
    for (const result of throughHub) assert.doesNotMatch(result.stderr, storeBusy);
    assert.deepEqual(
      throughHub.map((r) => r.code),
      [0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 1],
    );
    assert.match(throughHub[5].stdout, /✓ migrations applied/);
    assert.equal(throughHub[4].stdout, 'unchanged echo (revision 1)\nunchanged storyteller (revision 1)\n');

    hub!.child.kill('SIGTERM');
    assert.equal(await within(hub!.exited, 30_000, 'shutdown after SIGTERM'), 0, hub!.stderr());
    assert.ok(!existsSync(socket), 'a hub that stops removes its socket');

    const direct = await runRepeatable();
    REPEATABLE.forEach(({ args }, i) => assert.deepEqual(throughHub[i], direct[i], `palai ${args.join(' ')}`));
  });

  test('migrate, serve and bot slack, which cannot run beside the hub, say so in one line', async () => {
    hub = await startHub();
    const pid = hub.child.pid;
    const cases: [string[], RegExp][] = [
      [['migrate'], /it applied the migrations it knows when it started: stop it, then run palai migrate\.$/],
      [['serve', '--port', '0'], /a second hub cannot open that store: stop that one first, or set PALAI_DATABASE_URL/],
      [['bot', 'slack', '--bot', 'support'], /palai bot slack runs a hub of its own, so stop that one first/],
    ];
    for (const [args, consequence] of cases) {
      const result = await palai(args);
      assert.equal(result.code, 1, `palai ${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.equal(result.stderr.split('\n').length, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`^palai: palai serve \\(process ${pid}\\) is running on the embedded store at ${join(home, 'db')}; `));
      assert.match(result.stderr.trim(), consequence);
    }
  });

  test('palai mcp without --url bridges to the running hub', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(ROOT, 'bin', 'palai.mjs'), 'mcp'],
      env: { ...env, PALAI_API_KEY: API_KEY } as Record<string, string>,
      cwd: ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
    const client = new Client({ name: 'palai-socket-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['echo', 'storyteller']);
      const result = await client.callTool({ name: 'echo', arguments: { input: 'through the hub' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'through the hub' }]);
      assert.match(stderr, new RegExp(`palai mcp: palai serve \\(process ${hub!.child.pid}\\) holds the embedded store at .*; bridging to it at ${api}`));
    } finally {
      await client.close();
    }
  });

  test('a socket that other users can reach is not used', async () => {
    chmodSync(socket, 0o660);
    try {
      const refused = await palai(['keys', 'list']);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, storeBusy);
    } finally {
      chmodSync(socket, 0o600);
    }
    const used = await palai(['keys', 'list']);
    assert.equal(used.code, 0, used.stderr);
  });

  test('a socket, or a data directory, of another user is not used', { skip: asRoot ? false : 'chown needs root' }, async () => {
    for (const foreign of [socket, home]) {
      const { uid, gid } = lstatSync(foreign);
      chownSync(foreign, NOBODY, NOBODY);
      try {
        const refused = await palai(['keys', 'list']);
        assert.equal(refused.code, 1, `${foreign} of another user: ${refused.stdout}`);
        assert.match(refused.stderr, storeBusy);
      } finally {
        chownSync(foreign, uid, gid);
      }
    }
    const used = await palai(['keys', 'list']);
    assert.equal(used.code, 0, used.stderr);
  });

  test('a killed hub’s socket does not stop the CLI from opening the store, and the next hub replaces it; a client that never sends its command does not hold its shutdown', async () => {
    hub!.child.kill('SIGKILL');
    await hub!.exited;
    assert.ok(lstatSync(socket).isSocket(), 'the killed hub left its socket');
    const direct = await palai(['projects', 'list']);
    assert.equal(direct.code, 0, direct.stderr);
    assert.deepEqual(direct, throughHub[0]);

    // A grace far longer than the wait below: only a client that is let go at once lets the hub stop in time.
    hub = await startHub({ PALAI_SHUTDOWN_GRACE_SECONDS: '600' });
    const through = await palai(['projects', 'list']);
    assert.deepEqual(through, throughHub[0]);
    const idle = netConnect(socket);
    await new Promise<void>((resolve, reject) => idle.once('connect', resolve).once('error', reject));
    const dropped = new Promise<void>((resolve) => idle.once('close', () => resolve()));
    idle.on('error', () => undefined);
    hub.child.kill('SIGTERM');
    await dropped;
    assert.equal(await within(hub.exited, 30_000, 'shutdown after SIGTERM'), 0, hub.stderr());
  });
});
