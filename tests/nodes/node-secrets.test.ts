// Secrets as ephemeral input, on both stores, with a real `palai node run`:
// a project secret (POST /v1/secrets, never answered back) mapped into a node
// command's environment by the agent's tool entry; the model asks for it by
// name; the command sees the value; and no table of the hub, no file of the
// companion's home and no line of its log holds it.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cleanUpProcesses, startPalai, tempDir, userEnv, type Running } from '../support/cli.js';
import { describeEachStore } from '../support/hub.js';
import { until } from '../support/until.js';
import { GatewayListener } from './companion-hub.js';
import { secretDigest } from '../../core/surfaces/nodes/wire/secret-digest.js';

after(cleanUpProcesses);

/** Every file under `dir`, read whole. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [readFileSync(path, 'latin1')];
  });
}

describeEachStore(
  'secrets as ephemeral input to node commands',
  (ctx) => {
    const value = `ghp_${randomBytes(18).toString('hex')}`;
    const root = tempDir('palai-node-secrets-');
    const work = join(root, 'work');
    const home = join(root, 'home');
    const config = join(root, 'palai-node.yaml');
    let gateway: GatewayListener;
    let node: Running;
    const rest = (method: 'get' | 'post' | 'delete', path: string, body?: object) => {
      const req = ctx().http[method](path).set(ctx().auth);
      return body ? req.send(body) : req;
    };

    /** No table of the hub, no file of the companion's home and no line of its log holds the value. */
    const assertNoTrace = async () => {
      const db = ctx().hub.kernel.db;
      const { rows: tables } = await db.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
      );
      for (const { name } of tables) {
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}" t WHERE t::text LIKE $1`, [`%${value}%`]);
        assert.equal(rows[0].n, 0, `table ${name} holds the secret`);
      }
      for (const text of filesUnder(home)) assert.ok(!text.includes(value), "a file of the companion's home holds the secret");
      assert.ok(!node.stderr().includes(value) && !node.stdout().includes(value), "the companion's log holds the secret");
    };

    before(async () => {
      mkdirSync(work, { recursive: true });
      writeFileSync(
        config,
        `policy: { allowed_commands: [shell.exec.v1], maximum_risk: privileged }
shell:
  program: /bin/sh
  working_scopes: { work: ${work} }
  environment_names: [GITHUB_TOKEN, CI]
`,
      );
      gateway = new GatewayListener(ctx());
      await gateway.start();
      const token = (await rest('post', '/v1/node_enrollments', {})).body.token as string;
      node = startPalai(['node', 'run', '--hub', gateway.url, '--config', config, '--home', home, '--token', token], userEnv());
      await until('the companion pending', () => node.stderr().includes('is pending approval'));
      const nodeId = /node (node_[0-9a-z]{26}):/.exec(node.stderr())![1];
      assert.equal((await rest('post', `/v1/nodes/${nodeId}/approve`, { aliases: ['vault'], allowed_commands: ['shell.exec.v1'] })).status, 200);
      await until('the node connected', async () => (await rest('get', '/v1/nodes/vault')).body.state === 'connected');
    });
    after(async () => {
      node?.child.kill('SIGTERM');
      await node?.exited;
      await gateway.stop();
    });

    test('a stored secret is never answered; a name twice, a bad name, an unknown one to delete are refused', async () => {
      const created = await rest('post', '/v1/secrets', { name: 'github', value });
      assert.equal(created.status, 201, created.text);
      assert.match(created.body.id, /^sec_/);
      assert.equal(created.body.last4, value.slice(-4));
      assert.ok(!created.text.includes(value));
      // Its fingerprint, kept when stored, is the digest the node protocol binds it by: no plan needs the value opened.
      const { rows: kept } = await ctx().hub.kernel.db.query<{ value_digest: string; value_length: number }>(
        'SELECT value_digest, value_length FROM secrets WHERE id = $1',
        [created.body.id],
      );
      assert.deepEqual(kept[0], { value_digest: secretDigest(value), value_length: value.length });
      const listed = await rest('get', '/v1/secrets');
      assert.deepEqual(
        listed.body.data.map((s: any) => s.name),
        ['github'],
      );
      assert.ok(!listed.text.includes(value));
      assert.equal((await rest('post', '/v1/secrets', { name: 'github', value: 'another' })).status, 409);
      assert.equal((await rest('post', '/v1/secrets', { name: 'no spaces', value: 'x' })).status, 400);
      assert.equal((await rest('post', '/v1/secrets', { name: 'empty', value: '' })).status, 400);
      assert.equal((await rest('delete', '/v1/secrets/nope')).status, 404);
    });

    test('the command sees the secret it asked for by name; no table, home file or log line holds it', async () => {
      const agent = await rest('post', '/v1/agents', {
        name: 'deployer',
        tools: [{ type: 'node', node: 'vault', env: { GITHUB_TOKEN: { secret: 'github' } } }],
        model: {
          provider: 'fake',
          script: [
            {
              tool_calls: [
                {
                  name: 'node__vault__shell_exec',
                  arguments: { script: 'printf %s "$GITHUB_TOKEN" | sha256sum | cut -c1-64', working_scope: 'work', env: ['GITHUB_TOKEN'] },
                },
              ],
            },
            { text: 'done' },
          ],
        },
      });
      assert.equal(agent.status, 201, agent.text);
      const res = await rest('post', '/v1/responses', { model: 'deployer', input: 'deploy' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
      const output = JSON.parse(res.body.output.find((i: any) => i.type === 'mcp_call').output);
      assert.equal(output.exit_code, 0, JSON.stringify(output));
      assert.equal(output.stdout.trim(), createHash('sha256').update(value).digest('hex'), 'the command saw the value');

      await assertNoTrace();
    });

    test('a command that prints its secret: the model reads the value, every record a marker; a secret stored before fingerprints still binds', async () => {
      const db = ctx().hub.kernel.db;
      await db.query("UPDATE secrets SET value_digest = NULL, value_length = NULL WHERE name = 'github'");
      // Half the value: the agent's own record must not hold it whole.
      const printed = `{"exit_code":0,"stdout":"token=${value.slice(0, value.length / 2)}`;
      const agent = await rest('post', '/v1/agents', {
        name: 'echoer',
        tools: [{ type: 'node', node: 'vault', env: { GITHUB_TOKEN: { secret: 'github' } } }],
        model: {
          provider: 'fake',
          // The model's second call answers "seen" only when the output it reads holds the value as the command printed it, not its marker.
          script_choices: [{ when: { first_call: false, input_prefix: printed }, step: { text: 'seen' } }],
          script: [
            {
              tool_calls: [
                {
                  name: 'node__vault__shell_exec',
                  arguments: { script: 'echo "token=$GITHUB_TOKEN"; echo "$GITHUB_TOKEN" >&2', working_scope: 'work', env: ['GITHUB_TOKEN'] },
                },
              ],
            },
            { text: 'not seen' },
          ],
        },
      });
      assert.equal(agent.status, 201, agent.text);
      const res = await rest('post', '/v1/responses', { model: 'echoer', input: 'print it' });
      assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
      assert.equal(res.body.output_text ?? res.body.output.at(-1).content[0].text, 'seen');
      const output = JSON.parse(res.body.output.find((i: any) => i.type === 'mcp_call').output);
      assert.match(output.stdout, /^token=\[palai-secret:GITHUB_TOKEN@ninv_[0-9a-z]{26}\]\n$/);
      assert.match(output.stderr, /^\[palai-secret:GITHUB_TOKEN@ninv_[0-9a-z]{26}\]\n$/);
      await assertNoTrace();
    });

    test('a secret mapped for a name the node does not allow fails the run; a secret deleted since ends the call COMMAND_DENIED', async () => {
      const other = await rest('post', '/v1/secrets', { name: 'short-lived', value: 'x'.repeat(20) });
      assert.equal(other.status, 201);
      const call = { name: 'node__vault__shell_exec', arguments: { script: 'echo "$CI"', working_scope: 'work', env: ['CI'] } };
      const agent = await rest('post', '/v1/agents', {
        name: 'gone',
        tools: [{ type: 'node', node: 'vault', env: { CI: { secret: 'short-lived' } } }],
        model: { provider: 'fake', script: [{ tool_calls: [call] }, { text: 'done' }] },
      });
      assert.equal(agent.status, 201, agent.text);
      assert.equal((await rest('delete', `/v1/secrets/${other.body.id}`)).status, 200);
      const res = await rest('post', '/v1/responses', { model: 'gone', input: 'go' });
      assert.equal(res.body.status, 'completed', JSON.stringify(res.body));
      const output = JSON.parse(res.body.output.find((i: any) => i.type === 'mcp_call').output);
      assert.equal(output.error.code, 'COMMAND_DENIED', JSON.stringify(output));

      const refused = await rest('post', '/v1/agents', {
        name: 'not-allowed',
        tools: [{ type: 'node', node: 'vault', env: { AWS_SECRET: { secret: 'github' } } }],
        model: { provider: 'fake', script: [{ text: 'never' }] },
      });
      assert.equal(refused.status, 201, refused.text);
      const failed = await rest('post', '/v1/responses', { model: 'not-allowed', input: 'go' });
      assert.equal(failed.body.status, 'failed', JSON.stringify(failed.body));
      assert.match(JSON.stringify(failed.body.error), /AWS_SECRET/);
    });
  },
  { secretKey: 'node-secrets-tests-secret-key-0123456789' },
);
