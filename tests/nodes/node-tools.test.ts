// The `node` tool provider against a real hub on both stores, with a raw
// protocol node holding the connection: which functions an agent's entry
// stands for (names, schemas from the catalog, risk, approval), and what a
// call does with bad arguments — nothing prepared, nothing sent.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { deriveCatalog } from '../../adapters/nodes/companion/catalog.js';
import { parseCompanionConfig } from '../../adapters/nodes/companion/config.js';
import { nodeTools } from '../../adapters/nodes/node-tools.js';
import type { NodeToolSpec } from '../../generated/schemas.js';
import type { EgressFetch } from '../../core/egress/egress-port.js';
import { until } from '../support/until.js';
import { describeGateway, RawNode, type GatewayHub } from './gateway-hub.js';
import { newIdentity, proofFor } from './node-fixtures.js';

/** The catalog `palai node` derives from the example config. */
const { catalog } = deriveCatalog(
  parseCompanionConfig(`policy: { allowed_commands: [shell.exec.v1, system.exec.v1], maximum_risk: privileged, max_timeout_seconds: 600, max_output_bytes: 262144 }
shell:
  program: /bin/bash
  working_scopes: { repo: /srv/app, scratch: /tmp/palai-scratch }
  executables: { git: /usr/bin/git }
  environment_names: [CI]
`).config,
);

let aliases = 0;
let agents = 0;

/** A node approved for both commands under a fresh alias, its connection held by the hub's gateway. */
async function pairedNode(hub: GatewayHub): Promise<{ node: RawNode; alias: string; nodeId: string }> {
  const identity = newIdentity();
  const alias = `box${++aliases}`;
  const { node, challenge } = await RawNode.challenged(hub.url);
  node.send({ type: 'hello', proof: proofFor(identity, { nonce: challenge.nonce, catalog }), enrollment_token: await hub.token() });
  await node.next('admitted');
  const approved = await hub.http
    .post(`/v1/nodes/${identity.nodeId}/approve`)
    .set(hub.auth)
    .send({ aliases: [alias], allowed_commands: ['shell.exec.v1', 'system.exec.v1'] });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  await until('the gateway holds the node', () => hub.gateway.server.held().includes(identity.nodeId));
  return { node, alias, nodeId: identity.nodeId };
}

const resolve = (hub: GatewayHub, spec: Omit<NodeToolSpec, 'type'>) =>
  nodeTools(hub.api.nodeCalls).resolve(
    { type: 'node', ...spec },
    { projectId: hub.projectId, responseId: 'resp_test', egress: (() => undefined) as unknown as EgressFetch },
  );

/** Runs an agent whose model calls `tool` with `args` once, then answers "done"; the call's output. */
async function callOnce(hub: GatewayHub, alias: string, tool: string, args: unknown): Promise<string> {
  const name = `caller-${alias}-${++agents}`;
  const created = await hub.http
    .post('/v1/agents')
    .set(hub.auth)
    .send({
      name,
      tools: [{ type: 'node', node: alias }],
      model: { provider: 'fake', script: [{ tool_calls: [{ name: tool, arguments: args }] }, { text: 'done' }] },
    });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const res = await hub.http.post('/v1/responses').set(hub.auth).send({ model: name, input: 'go' });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
  const call = res.body.output.find((item: { type: string }) => item.type === 'mcp_call');
  return call.output as string;
}

await describeGateway('node tools', (ctx) => {
  it('an entry stands for node__<alias>__<command> per approved command, with the catalog’s schema and risk', async () => {
    const hub = ctx();
    const { alias, node } = await pairedNode(hub);
    const tools = await resolve(hub, { node: alias });
    assert.deepEqual(
      tools.map((t) => t.name),
      [`node__${alias}__shell_exec`, `node__${alias}__system_exec`],
    );
    const shell = tools[0];
    assert.equal(shell.risk, 'privileged');
    assert.equal(shell.approval, undefined);
    assert.deepEqual(shell.parameters, catalog.commands.find((c) => c.name === 'shell.exec.v1')!.input_schema);
    // The model sees scope names, executable aliases and environment names, never a path.
    const shown = JSON.stringify(tools.map((t) => t.parameters));
    for (const name of ['repo', 'scratch', 'git', 'CI']) assert.ok(shown.includes(`"${name}"`), `${name} is shown`);
    for (const path of ['/srv/app', '/tmp/palai-scratch', '/usr/bin/git', '/bin/bash']) assert.ok(!shown.includes(path), `${path} is not shown`);
    await node.close();
  });

  it('`commands` narrows the entry; `require_approval` asks for all or for the listed commands', async () => {
    const hub = ctx();
    const { alias, node } = await pairedNode(hub);
    assert.deepEqual(
      (await resolve(hub, { node: alias, commands: ['system.exec.v1'] })).map((t) => t.name),
      [`node__${alias}__system_exec`],
    );
    assert.deepEqual(
      (await resolve(hub, { node: alias, require_approval: 'always' })).map((t) => t.approval),
      ['always', 'always'],
    );
    assert.deepEqual(
      (await resolve(hub, { node: alias, require_approval: { commands: ['shell.exec.v1'] } })).map((t) => t.approval),
      ['always', undefined],
    );
    await node.close();
  });

  it('an unknown node cannot be resolved, and says which', async () => {
    const hub = ctx();
    await assert.rejects(resolve(hub, { node: 'nowhere' }), (error: Error) => error.name === 'ToolResolutionError' && error.message.includes('"nowhere"'));
  });

  it('a raw path as working scope, or an environment name not allowed, is refused before anything is prepared', async () => {
    const hub = ctx();
    const { alias, node, nodeId } = await pairedNode(hub);
    const path = await callOnce(hub, alias, `node__${alias}__shell_exec`, { script: 'ls', working_scope: '/etc' });
    assert.match(path, /Invalid arguments/u, path);
    const env = await callOnce(hub, alias, `node__${alias}__system_exec`, { executable: 'git', env: { AWS_SECRET_ACCESS_KEY: 'x' } });
    assert.match(env, /Invalid arguments/u, env);
    const executable = await callOnce(hub, alias, `node__${alias}__system_exec`, { executable: '/usr/bin/git' });
    assert.match(executable, /Invalid arguments/u, executable);
    assert.deepEqual((await hub.api.nodes.invocations(hub.projectId, nodeId, {})).data, [], 'nothing prepared');
    assert.deepEqual(node.pending('invoke'), [], 'nothing sent');
    await node.close();
  });

  it('a multi-byte script over 64 KiB in bytes (under it in characters) ends INVALID_PLAN and is never sent', async () => {
    const hub = ctx();
    const { alias, node, nodeId } = await pairedNode(hub);
    const script = `echo ${'é'.repeat(40_000)}`; // 40,005 characters, 80,005 bytes
    const output = JSON.parse(await callOnce(hub, alias, `node__${alias}__shell_exec`, { script }));
    assert.equal(output.error.code, 'INVALID_PLAN', JSON.stringify(output));
    const [invocation] = (await hub.api.nodes.invocations(hub.projectId, nodeId, {})).data;
    assert.equal(invocation.state, 'failed');
    assert.equal(invocation.dispatched_at, null, 'never sent');
    assert.deepEqual(node.pending('invoke'), []);
    await node.close();
  });

  it('a call sends one plan and its result is the call’s output', async () => {
    const hub = ctx();
    const { alias, node } = await pairedNode(hub);
    const answered = callOnce(hub, alias, `node__${alias}__system_exec`, { executable: 'git', args: ['status'], working_scope: 'repo' });
    const { plan } = await node.next('invoke');
    assert.deepEqual(plan.input, { executable: 'git', args: ['status'], working_scope: 'repo' });
    assert.equal(plan.command, 'system.exec.v1');
    node.send({ type: 'invoke.accepted', invocation_id: plan.invocation_id });
    node.send({
      type: 'invoke.result',
      invocation_id: plan.invocation_id,
      plan_hash: plan.plan_hash,
      state: 'succeeded',
      result: { exit_code: 0, stdout: 'On branch main\n', stderr: '', truncated: false },
    });
    assert.deepEqual(JSON.parse(await answered), { exit_code: 0, stdout: 'On branch main\n', stderr: '', truncated: false });
    assert.deepEqual(node.pending('invoke'), [], 'sent once');
    await node.close();
  });
});
