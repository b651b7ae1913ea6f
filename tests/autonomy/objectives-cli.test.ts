// `palai objectives` as an operator runs it, beside a spawned `palai serve` on
// the same PostgreSQL: objectives the REST API made are listed and shown; a
// policy is approved only by the hash of the document the command prints (a
// wrong hash or a missing version changes nothing); pause, resume and a manual
// wake change what the hub's REST API sees.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cleanUpProcesses, runPalai, startPalai, tempDir, userEnv, type Result, type Running } from '../support/cli.js';
import { freshPostgresDatabase, postgresUnavailable } from '../support/stores.js';
import { until } from '../support/until.js';

const API_KEY = 'palai_sk_objectives_cli_bootstrap_key_0123456789';
const STARTUP_TIMEOUT_MS = 90_000;
const COMMAND_TIMEOUT_MS = 60_000;

const DOCUMENT = {
  objective_scope: 'the deploy pipeline of example/app',
  consequence_classes: ['observe'],
  allowed_tools: null,
  max_tokens: 100_000,
  max_seconds: 600,
  quiet_hours: '22-07',
  timezone: 'Europe/Paris',
  expires_at: null,
};

type Json = Record<string, any>;

const unavailable = await postgresUnavailable();

describe('palai objectives beside a running hub', { skip: unavailable ?? false, timeout: 300_000 }, () => {
  let database: { url: string; drop(): Promise<void> };
  let env: NodeJS.ProcessEnv;
  let hub: Running;
  let base = '';
  let objective: Json;
  let draft: Json;

  const rest = async (method: string, path: string, body?: Json): Promise<Json> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${await res.clone().text()}`);
    return (await res.json()) as Json;
  };
  const newObjective = async (description: string): Promise<Json> => {
    const agent = await rest('POST', '/v1/agents', { name: `watcher-${Math.random().toString(36).slice(2, 10)}`, model: { provider: 'fake' } });
    return rest('POST', '/v1/objectives', { agent: agent.id, description, success_criteria: 'The last deploy is green.' });
  };

  before(async () => {
    database = await freshPostgresDatabase();
    env = userEnv({ PALAI_DATABASE_URL: database.url, PALAI_BOOTSTRAP_API_KEY: API_KEY, PALAI_HOME: '/nonexistent-palai-home' });
    hub = startPalai(['serve', '--port', '0'], env);
    [, base] = await hub.waitFor(/^Palai listening on (http:\/\/\S+)$/m, STARTUP_TIMEOUT_MS);
    objective = await newObjective('Check the deploy of example/app\nand open an issue when it is red; say so in the channel too.');
    draft = await rest('POST', `/v1/objectives/${objective.id}/policies`, { document: DOCUMENT });
    await rest('POST', `/v1/objectives/${objective.id}/schedules`, { cron: '0 9 1 1 *', timezone: 'Europe/Paris' });
  });
  after(async () => {
    hub?.child.kill('SIGTERM');
    await hub?.exited;
    cleanUpProcesses();
    await database?.drop();
  });

  const palai = (args: string[]): Promise<Result> => runPalai(['objectives', ...args], env, COMMAND_TIMEOUT_MS);
  const ok = async (args: string[]): Promise<Result> => {
    const result = await palai(args);
    assert.equal(result.code, 0, `palai objectives ${args.join(' ')}: ${result.stdout}${result.stderr}`);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
    return result;
  };
  const fails = async (args: string[], message: RegExp): Promise<Result> => {
    const result = await palai(args);
    assert.equal(result.code, 1, `palai objectives ${args.join(' ')}: ${result.stdout}${result.stderr}`);
    assert.match(result.stderr, message);
    assert.equal(result.stderr.trim().split('\n')[0].startsWith('palai: '), true, result.stderr);
    assert.doesNotMatch(result.stderr, /\n\s+at /);
    return result;
  };

  test('list and show present the objective as the API made it: blocked without a policy, its schedule, no wake yet', async () => {
    const [list, blocked, paused, show] = await Promise.all([
      ok(['list']),
      ok(['list', '--status', 'blocked']),
      ok(['list', '--status', 'paused']),
      ok(['show', objective.id]),
    ]);
    const [header, row, ...others] = list.stdout.trim().split('\n');
    assert.match(header, /^ID\s+AGENT\s+STATUS\s+POLICY\s+DESCRIPTION$/);
    assert.deepEqual(others, []);
    assert.match(row, new RegExp(`^${objective.id}\\s+${objective.agent_id}\\s+blocked\\s+-\\s+Check the deploy of example/app and open an iss…$`));
    assert.equal(blocked.stdout, list.stdout);
    assert.equal(paused.stdout, 'No paused objectives.\n');

    assert.match(show.stdout, new RegExp(`^Objective ${objective.id}$`, 'm'));
    assert.match(show.stdout, /^ {2}status:\s+blocked: no-approved-policy/m);
    assert.match(show.stdout, /^ {2}policy:\s+none approved$/m);
    assert.match(show.stdout, /^ {2}session mode:\s+objective \(session from its first wake\)$/m);
    assert.match(show.stdout, /^ {2}description:\s+Check the deploy of example\/app\n\s+and open an issue/m);
    assert.match(show.stdout, /^ {2}success criteria:\s+The last deploy is green\.$/m);
    assert.match(show.stdout, /^ {2}trg_\w+\s+cron\s+0 9 1 1 \* \(Europe\/Paris\)\s+enabled\s+\d{4}-01-01T08:00:00\.000Z\s+-\s+0\s+-$/m);
    assert.match(show.stdout, /^Wakes:\n {2}none yet$/m);
  });

  test('policy approve prints the document; a wrong hash or a missing version fails naming it and approves nothing; the right hash approves it', async () => {
    const wrongHash = `sha256:${'0'.repeat(64)}`;
    const [wrong, missing] = await Promise.all([
      fails(['policy', 'approve', objective.id, '1', '--hash', wrongHash], new RegExp(`"${wrongHash}" is not the hash of policy version 1`)),
      fails(['policy', 'approve', objective.id, '9', '--hash', draft.hash], /no policy version 9; its versions: 1 \(draft\)/),
    ]);
    assert.match(wrong.stderr, /\/hash: is not the hash of this version/);
    assert.match(wrong.stdout, /"objective_scope": "the deploy pipeline of example\/app"/, 'the document was printed before the refusal');
    assert.equal(missing.stdout, '');
    const [policies, still] = await Promise.all([rest('GET', `/v1/objectives/${objective.id}/policies`), rest('GET', `/v1/objectives/${objective.id}`)]);
    assert.deepEqual(
      policies.data.map((p: Json) => p.status),
      ['draft'],
    );
    assert.equal(still.status, 'blocked');

    const approved = await ok(['policy', 'approve', objective.id, '1', '--hash', draft.hash]);
    const lines = approved.stdout.trim().split('\n');
    assert.equal(lines[0], `Policy version 1 of ${objective.id} (draft, ${draft.hash}):`);
    assert.deepEqual(JSON.parse(lines.slice(1, -1).join('\n')), draft.document);
    assert.equal(lines.at(-1), `Approved policy version 1 of ${objective.id} (${draft.hash}); the objective is active.`);
    const [after, approvedPolicies] = await Promise.all([
      rest('GET', `/v1/objectives/${objective.id}`),
      rest('GET', `/v1/objectives/${objective.id}/policies`),
    ]);
    assert.equal(after.status, 'active');
    assert.deepEqual(after.policy, { version: 1, hash: draft.hash, expires_at: null });
    assert.equal(approvedPolicies.data[0].status, 'approved');

    const list = await ok(['list', '--status', 'active']);
    assert.match(list.stdout, new RegExp(`^${objective.id}\\s+\\S+\\s+active\\s+v1 ${draft.hash.slice(0, 'sha256:'.length + 12)}…\\s`, 'm'));
  });

  test('pause, resume and a manual wake change what the API sees; a paused objective is not woken', async () => {
    const paused = await ok(['pause', objective.id]);
    assert.equal(paused.stdout, `Objective ${objective.id} is paused.\n`);
    assert.equal((await rest('GET', `/v1/objectives/${objective.id}`)).status, 'paused');
    await fails(['wake', objective.id], /is paused; resume it before waking it/);
    assert.deepEqual((await rest('GET', `/v1/objectives/${objective.id}/wakes`)).data, []);

    const resumed = await ok(['resume', objective.id]);
    assert.equal(resumed.stdout, `Objective ${objective.id} is active.\n`);
    assert.equal((await rest('GET', `/v1/objectives/${objective.id}`)).status, 'active');

    const woke = await ok(['wake', objective.id, '--reason', 'the deploy was re-run']);
    const [, trigger, responseId] = /^Woke objective obj_\w+ \(trigger (trg_\w+), due \S+\): admitted, response (resp_\w+)\.$/.exec(woke.stdout.trim()) ?? [];
    assert.ok(responseId, woke.stdout);
    const wakes = (await rest('GET', `/v1/objectives/${objective.id}/wakes`)).data as Json[];
    assert.deepEqual(
      wakes.map((w) => [w.trigger_id, w.outcome, w.response_id]),
      [[trigger, 'admitted', responseId]],
    );
    const response = await rest('GET', `/v1/responses/${responseId}`);
    assert.equal(response.metadata.palai_objective, objective.id);
    // The hub's worker runs the wake the command admitted.
    await until('the wake ran', async () => (await rest('GET', `/v1/responses/${responseId}`)).status === 'completed');

    const show = await ok(['show', objective.id]);
    assert.match(show.stdout, new RegExp(`^ {2}policy:\\s+version 1, ${draft.hash}$`, 'm'));
    assert.match(show.stdout, new RegExp(`^ {2}${trigger}\\s+manual\\s+-\\s+done\\s+-\\s+\\S+Z\\s+0\\s+-$`, 'm'));
    assert.match(show.stdout, new RegExp(`^Wakes:\\n {2}DUE\\s+OUTCOME\\s+REASON\\s+RESPONSE\\n {2}\\S+Z\\s+admitted\\s+-\\s+${responseId}$`, 'm'));
  });

  test('resume without a usable policy lands blocked and says why; bad input is one line and exit 1', async () => {
    const other = await newObjective('Watch the nightly build.');
    const resumed = await ok(['resume', other.id]);
    assert.match(resumed.stdout, new RegExp(`^Objective ${other.id} is blocked: no-approved-policy: .+\\.\\n$`));
    assert.equal((await rest('GET', `/v1/objectives/${other.id}`)).status, 'blocked');

    await Promise.all([
      fails(['list', '--status', 'sleeping'], /--status is one of active, paused, blocked, completed, abandoned, not "sleeping"/),
      fails(['show', 'obj_nosuch'], /No objective with id "obj_nosuch"/),
      fails(['policy', 'approve', other.id, 'one', '--hash', draft.hash], /A policy version is a whole number of at least 1, not "one"/),
      fails(['policy', 'approve', other.id, '1', '--hash', draft.hash], /has no policy version 1; it has no policy yet/),
    ]);
  });
});

describe('palai objectives while palai serve holds the embedded store', { timeout: 300_000 }, () => {
  let env: NodeJS.ProcessEnv;
  let hub: Running;
  let base = '';

  before(async () => {
    env = userEnv({ PALAI_HOME: join(tempDir('palai-objectives-cli-'), 'home'), PALAI_BOOTSTRAP_API_KEY: API_KEY });
    hub = startPalai(['serve', '--port', '0'], env);
    [, base] = await hub.waitFor(/^Palai listening on (http:\/\/\S+)$/m, STARTUP_TIMEOUT_MS);
  });
  after(async () => {
    hub?.child.kill('SIGTERM');
    await hub?.exited;
    cleanUpProcesses();
  });

  test('the commands run on the hub, over its operator socket: a pause there is what the API sees', async () => {
    const headers = { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json' };
    const post = async (path: string, body: Json) =>
      (await (await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as Json;
    const agent = await post('/v1/agents', { name: 'watcher', model: { provider: 'fake' } });
    const objective = await post('/v1/objectives', { agent: agent.id, description: 'Watch the nightly build.' });
    const paused = await runPalai(['objectives', 'pause', objective.id], env, COMMAND_TIMEOUT_MS);
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal(paused.stdout, `Objective ${objective.id} is paused.\n`);
    const res = await fetch(`${base}/v1/objectives/${objective.id}`, { headers });
    assert.equal(((await res.json()) as Json).status, 'paused');
  });
});
