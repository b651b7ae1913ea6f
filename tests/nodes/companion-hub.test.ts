// `palai node run` against a real hub on PostgreSQL: enrolled with a token
// made over REST, pending while connected, approved without a restart, running
// what the hub prepares, reconnecting after the hub restarts (the command in
// flight answered from the ledger, never run twice), draining on SIGTERM, and
// ending with exit 1 once revoked. A reused single-use token enrolls nobody.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { NodeInvocation } from '../../generated/schemas.js';
import { cleanUpProcesses, runPalai, startPalai, tempDir, userEnv, type Running } from '../support/cli.js';
import { describeEachStore } from '../support/hub.js';
import { until } from '../support/until.js';
import { readRecords } from '../../adapters/nodes/companion/ledger.js';
import { GatewayListener } from './companion-hub.js';

/** Process groups a SIGKILLed companion left running. */
const leftovers: number[] = [];
after(() => {
  for (const group of leftovers) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  cleanUpProcesses();
});

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function nodeFiles(): { config: string; scratch: string } {
  const dir = tempDir('palai-node-hub-');
  const scratch = join(dir, 'scratch');
  mkdirSync(scratch);
  const config = join(dir, 'palai-node.yaml');
  writeFileSync(
    config,
    `policy: { allowed_commands: [shell.exec.v1, system.exec.v1], maximum_risk: privileged, max_timeout_seconds: 600, max_output_bytes: 262144, grace_seconds: 5 }
shell:
  program: /bin/bash
  working_scopes: { scratch: ${scratch} }
  executables: { git: /usr/bin/git }
  environment_names: [CI]
`,
  );
  return { config, scratch };
}

const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : []);

describeEachStore(
  'palai node run against a hub',
  (ctx) => {
    let gateway: GatewayListener;
    before(async () => {
      gateway = new GatewayListener(ctx());
      await gateway.start();
    });
    after(() => gateway.stop());

    const rest = (method: 'get' | 'post', path: string, body?: object) => {
      const req = ctx().http[method](path).set(ctx().auth);
      return body ? req.send(body) : req;
    };
    const enroll = async (): Promise<string> => {
      const res = await rest('post', '/v1/node_enrollments', {});
      assert.equal(res.status, 201, res.text);
      return res.body.token as string;
    };
    const companion = (files: { config: string }, home: string, token?: string): Running =>
      startPalai(['node', 'run', '--hub', gateway.url, '--config', files.config, '--home', home, ...(token ? ['--token', token] : [])], userEnv());
    const stderrHas = (node: Running, text: string, from = 0) => until(`companion says ${text}`, () => node.stderr().slice(from).includes(text));
    let seq = 0;
    const prepare = async (nodeId: string, script: string) => {
      seq += 1;
      const prepared = await gateway.api.nodeCalls.prepare(ctx().projectId, {
        responseId: `resp_companion${seq}`,
        callId: `call_${seq}`,
        nodeId,
        command: 'shell.exec.v1',
        input: { script, working_scope: 'scratch' },
      });
      assert.equal(prepared.output, null);
      return prepared.invocationId;
    };
    const untilConnected = () => until('the node is connected', async () => (await rest('get', `/v1/nodes/${nodeId}`)).body.state === 'connected');
    const invocation = (id: string): Promise<NodeInvocation> => gateway.api.nodeInvocations.get(ctx().projectId, id);
    const untilState = (id: string, states: string[]) =>
      until(`invocation ${id} ${states.join('|')}`, async () => {
        const row = await invocation(id);
        return states.includes(row.state) && row;
      });

    const files = nodeFiles();
    const home = join(tempDir('palai-node-home-'), 'home');
    let nodeId = '';
    let node: Running;

    test('enrolled with a REST token: pending while connected, then approved without a restart, and it runs what the hub sends', async () => {
      const token = await enroll();
      node = companion(files, home, token);
      await stderrHas(node, 'is pending approval');
      nodeId = /node (node_[0-9a-z]{26}):/.exec(node.stderr())![1];
      const listed = await rest('get', '/v1/nodes?state=pending_pairing');
      assert.deepEqual(
        listed.body.data.map((n: { id: string }) => n.id),
        [nodeId],
      );
      const status = await runPalai(['node', 'status', '--home', home], userEnv(), 30_000);
      assert.match(status.stdout, new RegExp(`node id: +${nodeId}`));
      assert.match(status.stdout, /pairing: +pending approval/);
      assert.ok(!readFileSync(join(home, 'state.json'), 'utf8').includes(token), 'the token is never written');

      const approved = await rest('post', `/v1/nodes/${nodeId}/approve`, { aliases: ['box'], allowed_commands: ['shell.exec.v1'] });
      assert.equal(approved.status, 200, approved.text);
      await stderrHas(node, 'paired: approved commands shell.exec.v1');
      await until('the node is connected by its alias', async () => (await rest('get', '/v1/nodes/box')).body.state === 'connected');

      const id = await prepare(nodeId, 'echo hello from $PWD; exit 4');
      const ended = await untilState(id, ['succeeded', 'failed']);
      assert.equal(ended.state, 'failed');
      assert.equal(ended.exit_code, 4);
      const after = await runPalai(['node', 'status', '--home', home], userEnv(), 30_000);
      assert.match(after.stdout, /pairing: +paired/);
      assert.match(after.stdout, /ledger: +1 invocation\(s\) \(failed 1\)/);
    });

    test('the hub restarts mid-command: the companion reconnects, and the command ran once', async () => {
      const log = join(files.scratch, 'ran.log');
      const id = await prepare(nodeId, `echo run >> ${log}; sleep 2; echo done`);
      await until('the command started', () => lines(log).length === 1);
      const mark = node.stderr().length;
      await gateway.stop();
      await stderrHas(node, 'reconnecting in', mark);
      await gateway.start();
      const ended = await untilState(id, ['succeeded', 'failed', 'unknown', 'canceled']);
      assert.equal(ended.state, 'succeeded');
      assert.deepEqual(lines(log), ['run']);
      await untilConnected();
    });

    test('SIGTERM lets the running command finish, then exits 0; the next start needs no token and runs nothing twice', async () => {
      const log = join(files.scratch, 'drain.log');
      const id = await prepare(nodeId, `echo start >> ${log}; sleep 1; echo end >> ${log}`);
      await until('the command started', () => lines(log).length === 1);
      node.child.kill('SIGTERM');
      assert.equal(await node.exited, 0, node.stderr());
      assert.match(node.stderr(), /received SIGTERM; letting 1 running command\(s\) finish/);
      assert.deepEqual(lines(log), ['start', 'end']);

      // Whether its last result reached the hub before the close or not, the re-send after reconnecting is answered from the ledger.
      node = companion(files, home);
      assert.equal((await untilState(id, ['succeeded', 'failed', 'unknown', 'canceled'])).state, 'succeeded');
      assert.deepEqual(lines(log), ['start', 'end']);
      await untilConnected();
    });

    test('a cancel through the hub during sleep 30 takes the process group, confirmed', async () => {
      const pidFile = join(files.scratch, 'sleep.pid');
      const id = await prepare(nodeId, `sleep 30 & echo $! > ${pidFile}; wait`);
      const pid = Number(await until('the sleep started', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim()));
      const canceled = await rest('post', `/v1/node_invocations/${id}/cancel`, {});
      assert.equal(canceled.status, 200, canceled.text);
      const ended = await untilState(id, ['canceled', 'succeeded', 'failed', 'unknown']);
      assert.equal(ended.state, 'canceled');
      assert.equal(ended.termination_confirmed, true);
      assert.equal(gone(pid), true);
    });

    test('the companion SIGKILLed mid-command and restarted: the call ends INVOCATION_UNKNOWN, and the command ran once', async () => {
      const log = join(files.scratch, 'killed.log');
      const pidFile = join(files.scratch, 'killed.pid');
      const id = await prepare(nodeId, `echo $$ > ${pidFile}; echo run >> ${log}; sleep 30`);
      await until('the command started', () => lines(log).length === 1 && existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim());
      leftovers.push(Number(readFileSync(pidFile, 'utf8')));
      await untilState(id, ['running']);
      await until('the ledger names its process group', () => [...readRecords(join(home, 'ledger')).values()].some((r) => r.invocation_id === id && r.pid));
      node.child.kill('SIGKILL');
      await node.exited;
      node = companion(files, home);
      const ended = await untilState(id, ['unknown', 'succeeded', 'failed', 'canceled']);
      assert.equal(ended.state, 'unknown');
      assert.equal(ended.failure_code, 'INVOCATION_UNKNOWN');
      assert.deepEqual(lines(log), ['run']);
      assert.match(node.stderr(), /1 invocation\(s\) whose outcome is unknown/);
      assert.match(node.stderr(), new RegExp(`process group\\(s\\) ${leftovers.at(-1)} of those may still be running`));
      await untilConnected();
    });

    test('a config reloaded on SIGHUP with another executable makes the node degraded; shell.exec.v1, whose descriptor is unchanged, still runs', async () => {
      const mark = node.stderr().length;
      writeFileSync(files.config, readFileSync(files.config, 'utf8').replace('{ git: /usr/bin/git }', '{ git: /usr/bin/git, ls: /bin/ls }'));
      node.child.kill('SIGHUP');
      await stderrHas(node, 'config reloaded: 2 command(s)', mark);
      await until('the node is degraded', async () => (await rest('get', `/v1/nodes/${nodeId}`)).body.state === 'degraded');
      const id = await prepare(nodeId, 'echo still');
      assert.equal((await untilState(id, ['succeeded', 'failed'])).state, 'succeeded');

      const valid = readFileSync(files.config, 'utf8');
      writeFileSync(files.config, 'policy: { allowed_commands: 7 }\n');
      node.child.kill('SIGHUP');
      await stderrHas(node, 'the config was not reloaded (the running one stays)', mark);
      writeFileSync(files.config, valid);
    });

    test('revoked, the companion exits 1 and says why; starting it again is refused the same way', async () => {
      const revoked = await rest('post', `/v1/nodes/${nodeId}/revoke`, {});
      assert.equal(revoked.status, 200, revoked.text);
      assert.equal(await node.exited, 1, node.stderr());
      assert.match(node.stderr(), /the hub refused this node for good \(4403.*\): the hub revoked or denied this node/);
      const again = companion(files, home);
      assert.equal(await again.exited, 1, again.stderr());
      assert.match(again.stderr(), /\(4403/);
    });

    test('a reused single-use token is refused with exit 1 and makes no node', async () => {
      const token = await enroll();
      const first = companion(nodeFiles(), join(tempDir('palai-node-home-'), 'home'), token);
      await stderrHas(first, 'is pending approval');
      const before = (await rest('get', '/v1/nodes')).body.data.length;
      const second = companion(nodeFiles(), join(tempDir('palai-node-home-'), 'home'), token);
      assert.equal(await second.exited, 1, second.stderr());
      assert.match(second.stderr(), /\(4412: .*\): the hub does not know this node and refused its enrollment token/);
      assert.equal((await rest('get', '/v1/nodes')).body.data.length, before);
      first.child.kill('SIGTERM');
      assert.equal(await first.exited, 0);
    });
  },
  {},
  { stores: ['postgres'] },
);
