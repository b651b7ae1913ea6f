// The workspace commands end to end, on both stores: `palai node run` (a real
// child process) with two file profiles, paired to the test hub, and an
// agent's fake model reading, searching, writing and patching a temporary
// repository through `node__box__workspace_*`. What the node's rules refuse
// (a path out of the profile, an outward symlink, an overwrite the profile
// does not allow) is COMMAND_DENIED and touches nothing; a patch whose second
// file does not apply changes neither file.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cleanUpProcesses, startPalai, tempDir, userEnv, type Running } from '../support/cli.js';
import { describeEachStore } from '../support/hub.js';
import { until } from '../support/until.js';
import { GatewayListener } from './companion-hub.js';

after(cleanUpProcesses);

const COMMANDS = ['workspace.read.v1', 'workspace.search.v1', 'workspace.write.v1', 'workspace.patch.v1'];
/** What the node offers at first: write comes later, and needs approving again. */
const FIRST = COMMANDS.filter((c) => c !== 'workspace.write.v1');

interface Tree {
  config: string;
  home: string;
  repo: string;
  docs: string;
  outside: string;
}

/** A repository, a docs folder that takes no overwrites, a folder outside both (with a secret), and the config of the shape. */
function tree(): Tree {
  const root = tempDir('palai-workspace-');
  const [repo, docs, outside, home] = ['repo', 'docs', 'outside', 'home'].map((name) => join(root, name));
  for (const dir of [repo, join(repo, 'src'), docs, outside]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(repo, 'b.txt'), 'alpha\nbeta\ngamma\n');
  writeFileSync(join(repo, 'src', 'main.ts'), 'const needle = 1;\nexport { needle };\n');
  writeFileSync(join(docs, 'guide.md'), '# Guide\n');
  writeFileSync(join(outside, 'secret.txt'), 'the secret outside\n');
  symlinkSync(join(outside, 'secret.txt'), join(repo, 'link.txt'));
  symlinkSync(outside, join(repo, 'out'));
  const config = join(root, 'palai-node.yaml');
  writeFileSync(
    config,
    `policy: { allowed_commands: [${FIRST.join(', ')}], maximum_risk: write }
files:
  - alias: repo
    readable_roots: [${repo}]
    writable_roots: [${repo}]
    allow_create: true
    allow_overwrite: true
    max_file_bytes: 65536
  - alias: docs
    revision: v1
    readable_roots: [${docs}]
    writable_roots: [${docs}]
    allow_create: true
    allow_overwrite: false
`,
  );
  return { config, home, repo, docs, outside };
}

const patchOf = (...sections: string[]) => sections.join('');
const section = (file: string, hunk: string) => `--- a/${file}\n+++ b/${file}\n${hunk}`;

describeEachStore('workspace commands through a paired node', (ctx) => {
  let gateway: GatewayListener;
  let node: Running;
  const files = tree();
  before(async () => {
    gateway = new GatewayListener(ctx());
    await gateway.start();
    const rest = (method: 'get' | 'post', path: string, body?: object) => {
      const req = ctx().http[method](path).set(ctx().auth);
      return body ? req.send(body) : req;
    };
    const token = (await rest('post', '/v1/node_enrollments', {})).body.token as string;
    node = startPalai(['node', 'run', '--hub', gateway.url, '--config', files.config, '--home', files.home, '--token', token], userEnv());
    await until('the companion pending', () => node.stderr().includes('is pending approval'));
    const nodeId = /node (node_[0-9a-z]{26}):/.exec(node.stderr())![1];
    const approved = await rest('post', `/v1/nodes/${nodeId}/approve`, { aliases: ['box'], allowed_commands: FIRST });
    assert.equal(approved.status, 200, approved.text);
    await until('the node connected', async () => (await rest('get', '/v1/nodes/box')).body.state === 'connected');
  });
  after(async () => {
    node?.child.kill('SIGTERM');
    await node?.exited;
    await gateway.stop();
  });

  let agents = 0;
  /** One response whose model makes these calls one step each; each call's output, in order. */
  async function run(calls: Array<{ tool: string; args: Record<string, unknown> }>): Promise<any[]> {
    const name = `files-${++agents}`;
    const steps = calls.map(({ tool, args }) => ({ tool_calls: [{ name: `node__box__workspace_${tool}`, arguments: args }] }));
    const created = await ctx()
      .http.post('/v1/agents')
      .set(ctx().auth)
      .send({ name, tools: [{ type: 'node', node: 'box' }], model: { provider: 'fake', script: [...steps, { text: 'done' }] } });
    assert.equal(created.status, 201, created.text);
    const res = await ctx().http.post('/v1/responses').set(ctx().auth).send({ model: name, input: 'go' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
    return res.body.output.filter((item: { type: string }) => item.type === 'mcp_call').map((item: { output: string }) => JSON.parse(item.output));
  }
  const denied = (output: any) => {
    assert.equal(output.error?.code, 'COMMAND_DENIED', JSON.stringify(output));
    assert.ok(!JSON.stringify(output).includes(files.outside) && !JSON.stringify(output).includes(files.repo), 'no path of the node is shown');
  };

  test('a node that starts offering workspace.write.v1 is degraded: the tool is absent until the new catalog is approved', async () => {
    const rest = (method: 'get' | 'post', path: string, body?: object) => {
      const req = ctx().http[method](path).set(ctx().auth);
      return body ? req.send(body) : req;
    };
    writeFileSync(files.config, readFileSync(files.config, 'utf8').replace(FIRST.join(', '), COMMANDS.join(', ')));
    const mark = node.stderr().length;
    node.child.kill('SIGHUP');
    await until('the companion reloaded', () => node.stderr().slice(mark).includes('config reloaded:'));
    const degraded = await until('the node degraded', async () => {
      const got = (await rest('get', '/v1/nodes/box')).body;
      return got.state === 'degraded' && got;
    });
    assert.deepEqual(degraded.catalog_changes, { added: ['workspace.write.v1'], removed: [], changed: [] });
    assert.ok(!degraded.usable_commands.includes('workspace.write.v1'));
    assert.ok(degraded.usable_commands.includes('workspace.read.v1'), 'unchanged approved commands keep working');
    const [absent, read] = await run([
      { tool: 'write', args: { profile: 'repo', path: 'early.txt', content: 'x', create: true } },
      { tool: 'read', args: { profile: 'repo', path: 'a.txt' } },
    ]);
    assert.match(absent.error, /no tool named/);
    assert.equal(read.content, 'one\ntwo\nthree\n');
    const approved = await rest('post', '/v1/nodes/box/approve', { allowed_commands: COMMANDS });
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual(approved.body.catalog_changes, { added: [], removed: [], changed: [] });
    await until('the node connected', async () => (await rest('get', '/v1/nodes/box')).body.state === 'connected');
    const [written] = await run([{ tool: 'write', args: { profile: 'repo', path: 'early.txt', content: 'x', create: true } }]);
    assert.equal(written.created, true, JSON.stringify(written));
  });

  test('read, search, write and patch in a repository', async () => {
    const twoFiles = patchOf(
      section('a.txt', '@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n'),
      section('b.txt', '@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n'),
    );
    const [read, search, written, patched, reread] = await run([
      { tool: 'read', args: { profile: 'repo', path: 'a.txt' } },
      { tool: 'search', args: { profile: 'repo', pattern: 'needle', glob: '**/*.ts' } },
      { tool: 'write', args: { profile: 'repo', path: 'new.txt', content: 'fresh\n', create: true } },
      { tool: 'patch', args: { profile: 'repo', patch: twoFiles } },
      { tool: 'read', args: { profile: 'repo', path: 'b.txt', offset: 6, length: 4 } },
    ]);
    assert.equal(read.content, 'one\ntwo\nthree\n');
    assert.equal(read.binary, false);
    assert.deepEqual(
      search.matches.map((m: any) => [m.path, m.line]),
      [
        ['src/main.ts', 1],
        ['src/main.ts', 2],
      ],
    );
    assert.equal(written.created, true);
    assert.equal(readFileSync(join(files.repo, 'new.txt'), 'utf8'), 'fresh\n');
    assert.deepEqual(
      patched.files.map((f: any) => f.path),
      ['a.txt', 'b.txt'],
    );
    assert.equal(readFileSync(join(files.repo, 'a.txt'), 'utf8'), 'one\nTWO\nthree\n');
    assert.equal(reread.content, 'BETA');
    assert.equal(reread.truncated, true);
  });

  test('a patch whose second file does not apply changes neither file', async () => {
    const before = [readFileSync(join(files.repo, 'a.txt')), readFileSync(join(files.repo, 'b.txt'))];
    const broken = patchOf(
      section('a.txt', '@@ -1,3 +1,3 @@\n one\n-TWO\n+2\n three\n'),
      section('b.txt', '@@ -1,3 +1,3 @@\n alpha\n-not there\n+x\n gamma\n'),
    );
    const [failed] = await run([{ tool: 'patch', args: { profile: 'repo', patch: broken } }]);
    assert.equal(failed.error?.code, 'EXECUTION_FAILED', JSON.stringify(failed));
    assert.match(failed.error.message, /b\.txt/);
    assert.deepEqual([readFileSync(join(files.repo, 'a.txt')), readFileSync(join(files.repo, 'b.txt'))], before);
  });

  test('out of the profile, an outward symlink, an overwrite the profile forbids: COMMAND_DENIED before anything is read or written', async () => {
    const outputs = await run([
      { tool: 'read', args: { profile: 'repo', path: '../outside/secret.txt' } },
      { tool: 'read', args: { profile: 'repo', path: 'link.txt' } },
      { tool: 'read', args: { profile: 'repo', path: 'out/secret.txt' } },
      { tool: 'read', args: { profile: 'repo', path: files.outside + '/secret.txt' } },
      { tool: 'write', args: { profile: 'repo', path: 'link.txt', content: 'overwritten' } },
      { tool: 'patch', args: { profile: 'repo', patch: section('link.txt', '@@ -1 +1 @@\n-the secret outside\n+gone\n') } },
      { tool: 'write', args: { profile: 'docs', path: 'guide.md', content: '# Replaced\n' } },
      { tool: 'read', args: { profile: 'nope', path: 'a.txt' } },
    ]);
    // A profile the node does not offer is not even sent: the catalog's schema names the ones it does.
    assert.match(outputs.pop().error, /profile must be equal to one of the allowed values/);
    for (const output of outputs) denied(output);
    assert.equal(readFileSync(join(files.outside, 'secret.txt'), 'utf8'), 'the secret outside\n');
    assert.equal(readFileSync(join(files.docs, 'guide.md'), 'utf8'), '# Guide\n');
  });

  test('an approval pending while the operator narrows the profile and re-approves the node: approving the call ends it COMMAND_UNAVAILABLE, the file untouched', async () => {
    const api = ctx().hub.api;
    const name = `approver-${++agents}`;
    const created = await ctx()
      .http.post('/v1/agents')
      .set(ctx().auth)
      .send({
        name,
        tools: [{ type: 'node', node: 'box', require_approval: { commands: ['workspace.write.v1'] } }],
        model: {
          provider: 'fake',
          script: [
            { tool_calls: [{ name: 'node__box__workspace_write', arguments: { profile: 'repo', path: 'a.txt', content: 'replaced\n' } }] },
            { text: 'done' },
          ],
        },
      });
    assert.equal(created.status, 201, created.text);
    const admitted = await api.responses.admit(ctx().projectId, { agent: name, input: [{ role: 'user', content: 'go' }] });
    const waiting = await api.responses.waitUntilSettled(ctx().projectId, admitted.id, 30_000);
    assert.equal(waiting.status, 'waiting_for_approval');
    const [pending] = waiting.pending_calls;
    const shown = pending.approval_display as Record<string, any>;
    assert.equal(shown.alias, 'box');
    assert.equal(shown.command, 'workspace.write.v1');
    assert.equal(shown.profile, 'repo');
    assert.deepEqual(shown.arguments, { profile: 'repo', path: 'a.txt', content: 'replaced\n' });
    assert.match(shown.descriptor_digest, /^sha256:[0-9a-f]{64}$/);
    assert.match(shown.authority_digest, /^sha256:[0-9a-f]{64}$/);

    // The operator narrows the repo profile (no more overwrites) and approves the node's new catalog.
    const before = readFileSync(join(files.repo, 'a.txt'));
    writeFileSync(
      files.config,
      readFileSync(files.config, 'utf8').replace(
        '    allow_overwrite: true\n    max_file_bytes: 65536',
        '    allow_overwrite: false\n    max_file_bytes: 65536',
      ),
    );
    const mark = node.stderr().length;
    node.child.kill('SIGHUP');
    await until('the companion reloaded', () => node.stderr().slice(mark).includes('config reloaded:'));
    await until('the node degraded', async () => (await ctx().http.get('/v1/nodes/box').set(ctx().auth)).body.state === 'degraded');
    const approved = await ctx().http.post('/v1/nodes/box/approve').set(ctx().auth).send({ allowed_commands: COMMANDS });
    assert.equal(approved.status, 200, approved.text);

    await api.responses.decideApproval(ctx().projectId, admitted.id, { call_id: pending.call_id, decision: 'approve' });
    const ended = await api.responses.waitUntilSettled(ctx().projectId, admitted.id, 30_000);
    assert.equal(ended.status, 'completed', JSON.stringify(ended));
    const output = (ended.output as any[]).find((item) => item.type === 'function_call_output')?.output;
    assert.equal(JSON.parse(output).error.code, 'COMMAND_UNAVAILABLE', output);
    assert.deepEqual(readFileSync(join(files.repo, 'a.txt')), before, 'the file is untouched');
    const { rows } = await ctx().hub.kernel.db.query<{ n: number }>('SELECT count(*)::int AS n FROM node_invocations WHERE response_id = $1', [admitted.id]);
    assert.equal(rows[0].n, 0, 'no plan was prepared');

    // An approval that comes after the response was cancelled dispatches nothing either.
    const second = await api.responses.admit(ctx().projectId, { agent: name, input: [{ role: 'user', content: 'again' }] });
    const waitingAgain = await api.responses.waitUntilSettled(ctx().projectId, second.id, 30_000);
    assert.equal(waitingAgain.status, 'waiting_for_approval');
    await api.responses.cancel(ctx().projectId, second.id);
    await assert.rejects(api.responses.decideApproval(ctx().projectId, second.id, { call_id: waitingAgain.pending_calls[0].call_id, decision: 'approve' }));
    const { rows: none } = await ctx().hub.kernel.db.query<{ n: number }>('SELECT count(*)::int AS n FROM node_invocations WHERE response_id = $1', [
      second.id,
    ]);
    assert.equal(none[0].n, 0, 'nothing was dispatched');
    assert.deepEqual(readFileSync(join(files.repo, 'a.txt')), before);
  });

  const restOk = async (method: 'get' | 'post', path: string, body?: object, status = 200) => {
    const req = ctx().http[method](path).set(ctx().auth);
    const res = await (body ? req.send(body) : req);
    assert.equal(res.status, status, res.text);
    return res.body;
  };
  const readIn = (profile: string, path: string) => ({ name: 'node__box__workspace_read', arguments: { profile, path } });

  /**
   * A wake of an agent whose fake model makes these calls, one a step, under a
   * policy of observe calls with these grants (each with the status its
   * creation answers); the wake's outputs, parsed.
   */
  const wakeCalling = async (calls: object[], grants: [object, number][]) => {
    const name = `watcher-${++agents}`;
    const script = [...calls.map((call) => ({ tool_calls: [call] })), { text: 'done' }];
    await restOk('post', '/v1/agents', { name, tools: [{ type: 'node', node: 'box' }], model: { provider: 'fake', script } }, 201);
    const objective = await restOk('post', '/v1/objectives', { agent: name, description: 'Read the docs.' }, 201);
    const document = { objective_scope: 'the docs', consequence_classes: ['observe'] };
    const draft = await restOk('post', `/v1/objectives/${objective.id}/policies`, { document }, 201);
    await restOk('post', `/v1/objectives/${objective.id}/policies/${draft.version}/approve`, { hash: draft.hash });
    await restOk('post', `/v1/objectives/${objective.id}/grants`, { type: 'command', locator: 'box/*', access_mode: 'read' }, 201);
    for (const [body, status] of grants) await restOk('post', `/v1/objectives/${objective.id}/grants`, body, status);
    const wake = await restOk('post', `/v1/objectives/${objective.id}/wake`, {}, 201);
    const state = await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, wake.response_id, 30_000);
    assert.equal(state.status, 'completed', JSON.stringify(state));
    const outputs = (state.output as any[]).filter((i) => i.type === 'function_call_output').map((i) => JSON.parse(i.output));
    return { objectiveId: objective.id as string, responseId: wake.response_id as string, outputs };
  };

  test("a wake's filesystem grant on one profile: a path in another is refused before anything is sent, a symlink in it pointing outside by the node before anything is read", async () => {
    symlinkSync(join(files.outside, 'secret.txt'), join(files.docs, 'escape.txt'));
    const { objectiveId, responseId, outputs } = await wakeCalling(
      [readIn('repo', 'a.txt'), readIn('docs', 'guide.md'), readIn('docs', 'escape.txt')],
      [[{ type: 'filesystem', locator: 'box/docs', access_mode: 'read' }, 201]],
    );
    const [other, guide, escape] = outputs;
    assert.equal(other.rule, 'no-grant');
    assert.match(other.reason, /box\/repo/);
    assert.equal(guide.content, '# Guide\n');
    denied(escape);
    const { rows } = await ctx().hub.kernel.db.query<{ input: any }>("SELECT plan->'input' AS input FROM node_invocations WHERE response_id = $1", [
      responseId,
    ]);
    assert.deepEqual(rows.map((r) => r.input.path).sort(), ['escape.txt', 'guide.md'], 'the call in the other profile was never sent');
    const actions = (await restOk('get', `/v1/objectives/${objectiveId}/actions`)).data;
    assert.deepEqual(actions.map((a: any) => [a.target, a.status]).sort(), [
      ['box/docs', 'failed'],
      ['box/docs', 'succeeded'],
      ['box/repo', 'cancelled'],
    ]);
  });

  test("a wake's filesystem grant on part of a profile: a path beside it is refused before anything is sent, a symlink in it leading elsewhere in the profile by the node", async () => {
    mkdirSync(join(files.docs, 'sub'));
    writeFileSync(join(files.docs, 'sub', 'in.md'), 'inside the part\n');
    symlinkSync(join(files.docs, 'guide.md'), join(files.docs, 'sub', 'up.md'));
    const search = { name: 'node__box__workspace_search', arguments: { profile: 'docs', pattern: 'Guide', path: 'sub' } };
    const part = (locator: string) => ({ type: 'filesystem', locator, access_mode: 'read' });
    const { responseId, outputs } = await wakeCalling(
      [readIn('docs', 'sub/in.md'), readIn('docs', 'guide.md'), readIn('docs', 'sub/../guide.md'), readIn('docs', 'sub/up.md'), search],
      // Refused at creation: a part of every profile, and a part that climbs.
      [
        [part('box/*/sub'), 400],
        [part('box/docs/sub/..'), 400],
        [part('box/docs/sub'), 201],
      ],
    );
    const [inside, beside, climbing, link, searched] = outputs;
    assert.equal(inside.content, 'inside the part\n');
    assert.equal(beside.rule, 'no-grant');
    assert.match(beside.reason, /"guide\.md"/);
    assert.equal(climbing.rule, 'no-grant');
    denied(link);
    assert.match(link.error.message, /confined/);
    assert.deepEqual(searched.matches, [], 'the symlink to a file beside the part is not searched');
    const { rows } = await ctx().hub.kernel.db.query<{ path: string; within: string[] }>(
      "SELECT plan->'input'->>'path' AS path, plan->'workspace_within' AS within FROM node_invocations WHERE response_id = $1 ORDER BY id",
      [responseId],
    );
    assert.deepEqual(
      rows.map((r) => [r.path, r.within]),
      [
        ['sub/in.md', ['sub']],
        ['sub/up.md', ['sub']],
        ['sub', ['sub']],
      ],
      'only the calls inside the part were sent, each confined to it',
    );
  });
});
