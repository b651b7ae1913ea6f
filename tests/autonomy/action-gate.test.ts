// The call gate of wakes, on both stores: a wake's fake model proposes calls
// (http_post to a local receiver, current_time, an MCP tool of the tests'
// stdio fixture server) and the gate refuses what the approved policy, the
// grants and the pace do not allow, before anything runs; the action journal
// follows every gated call to how it ended, and a person settles an uncertain
// one once.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ResponseState } from '../../core/api/index.js';
import { ROOT } from '../support/cli.js';
import { describeEachStore, stdioServersFile, withSlice, type TestHub } from '../support/hub.js';
import { startReceiver as startWebhookReceiver, verified } from '../support/webhook-receiver.js';
import { agent, approvedPolicy, call, objective, POLICY, send, type Json } from './objectives-support.js';

/** A local receiver that counts what reached it, by idempotency key. */
interface Receiver {
  url: string;
  keys: string[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const keys: string[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      keys.push(String(req.headers['idempotency-key']));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    keys,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const post = (url: string, body: unknown = { n: 1 }) => ({ name: 'http_post', arguments: { url, body } });

/** The outputs of a response's calls, in the order the model made them. */
function outputs(state: ResponseState): Json[] {
  const items = state.output as Array<{ type: string; call_id: string; output?: string }>;
  return items
    .filter((item) => item.type === 'function_call')
    .map((fc) => {
      const output = items.find((item) => item.type === 'function_call_output' && item.call_id === fc.call_id)?.output ?? 'null';
      try {
        return JSON.parse(output);
      } catch {
        return { text: output };
      }
    });
}

async function wakeAndSettle(ctx: () => TestHub, objectiveId: string): Promise<ResponseState> {
  const wake = await call(ctx, 'post', `/v1/objectives/${objectiveId}/wake`, 'wakeObjective', 201, {});
  assert.equal(wake.outcome, 'admitted', JSON.stringify(wake));
  return ctx().hub.api.responses.waitUntilSettled(ctx().projectId, wake.response_id, 40_000);
}

const actions = async (ctx: () => TestHub, objectiveId: string, query = ''): Promise<Json[]> =>
  (await call(ctx, 'get', `/v1/objectives/${objectiveId}/actions${query}`, 'listObjectiveActions', 200)).data;

const grant = (ctx: () => TestHub, objectiveId: string, body: Json, status = 201) =>
  call(ctx, 'post', `/v1/objectives/${objectiveId}/grants`, 'createObjectiveGrant', status, body);

/** An objective of an agent with these tools and this script, under `document`, with these grants. */
async function gated(ctx: () => TestHub, steps: Json[], document: Json, grants: Json[] = [], tools: Json[] = [{ type: 'builtin', name: 'http_post' }]) {
  const watcher = await agent(ctx, { model: { provider: 'fake', script: [...steps, { text: 'done' }] }, tools });
  const { id } = await objective(ctx, { agent: watcher });
  const policy = await approvedPolicy(ctx, id, document);
  for (const body of grants) await grant(ctx, id, body);
  return { id, policy };
}

const CHANNEL = { type: 'channel', locator: '127.0.0.1', access_mode: 'write' };

await describeEachStore(
  'the call gate of wakes',
  (ctx) => {
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
    });
    after(() => receiver.close());

    test('a policy of observe only: http_post is refused naming the class, the receiver sees nothing, the action is cancelled', async () => {
      const before = receiver.keys.length;
      const { id, policy } = await gated(ctx, [{ tool_calls: [post(receiver.url)] }], POLICY, [{ ...CHANNEL, access_mode: 'read' }]);
      const state = await wakeAndSettle(ctx, id);
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      const [refusal] = outputs(state);
      assert.equal(refusal.refused, true);
      assert.equal(refusal.rule, 'consequence-class');
      assert.equal(refusal.class, 'external_effect');
      assert.equal(refusal.policy_hash, policy.hash);
      assert.equal(receiver.keys.length, before, 'the receiver saw no request');
      const [action] = await actions(ctx, id);
      assert.equal(action.status, 'cancelled');
      assert.equal(action.verdict, 'refused');
      assert.equal(action.rule, 'consequence-class');
      assert.match(action.reason, /external_effect/);
      assert.equal(action.target_type, 'channel');
      assert.equal(action.id, `${state.id}:${action.call_id}`);
    });

    test('max_actions_per_period 2: two posts reach the receiver, the third is refused with the reset time', async () => {
      const document = { ...POLICY, consequence_classes: ['observe', 'external_effect'], max_actions_per_period: { count: 2, period_seconds: 3600 } };
      const steps = [1, 2, 3].map((n) => ({ tool_calls: [post(receiver.url, { n })] }));
      const { id } = await gated(ctx, steps, document, [CHANNEL]);
      const state = await wakeAndSettle(ctx, id);
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      const [first, second, third] = outputs(state);
      assert.equal(first.status, 200);
      assert.equal(second.status, 200);
      assert.equal(third.rule, 'max-actions-per-period');
      const resets = Date.parse(third.resets_at);
      assert.ok(resets > Date.now() + 3500_000 && resets <= Date.now() + 3600_000, third.resets_at);
      assert.equal(receiver.keys.filter((key) => key.startsWith(`${state.id}:`)).length, 2);
      const journal = await actions(ctx, id);
      assert.deepEqual(journal.map((a) => a.status).sort(), ['cancelled', 'succeeded', 'succeeded']);
      assert.equal((await actions(ctx, id, '?status=succeeded')).length, 2);
      assert.equal((await actions(ctx, id, '?class=observe')).length, 0);
      const paged = await call(ctx, 'get', `/v1/objectives/${id}/actions?limit=2`, 'listObjectiveActions', 200);
      assert.equal(paged.has_more, true);
      const rest = await call(ctx, 'get', `/v1/objectives/${id}/actions?limit=2&after=${encodeURIComponent(paged.last_id)}`, 'listObjectiveActions', 200);
      assert.equal(rest.data.length, 1);
      assert.ok(!paged.data.some((a: Json) => a.id === rest.data[0].id));
      const shown = await call(ctx, 'get', `/v1/objectives/${id}`, 'getObjective', 200);
      assert.equal(shown.pace_state.actions_in_period, 2);
    });

    test('quiet hours covering now: only observe runs', async () => {
      const hour = new Date().getUTCHours();
      const pad = (h: number) => String((h + 24) % 24).padStart(2, '0');
      const document = { ...POLICY, consequence_classes: ['observe', 'external_effect'], quiet_hours: `${pad(hour - 1)}-${pad(hour + 2)}`, timezone: 'UTC' };
      const before = receiver.keys.length;
      const { id } = await gated(
        ctx,
        [{ tool_calls: [{ name: 'current_time', arguments: {} }, post(receiver.url)] }],
        document,
        [CHANNEL],
        [
          { type: 'builtin', name: 'http_post' },
          { type: 'builtin', name: 'current_time' },
        ],
      );
      const state = await wakeAndSettle(ctx, id);
      const [time, refused] = outputs(state);
      assert.equal(time.refused, undefined, JSON.stringify(time));
      assert.equal(refused.rule, 'quiet-hours');
      assert.equal(receiver.keys.length, before);
      const journal = await actions(ctx, id);
      assert.deepEqual(journal.map((a) => `${a.class}:${a.status}`).sort(), ['external_effect:cancelled', 'observe:succeeded']);
    });

    test('no grant covers the host: refused before anything is sent', async () => {
      const document = { ...POLICY, consequence_classes: ['external_effect'] };
      const before = receiver.keys.length;
      const { id } = await gated(ctx, [{ tool_calls: [post(receiver.url)] }], document, [{ ...CHANNEL, locator: 'hooks.example.com' }]);
      const [refused] = outputs(await wakeAndSettle(ctx, id));
      assert.equal(refused.rule, 'no-grant');
      assert.equal(receiver.keys.length, before);
      // Revoked, a grant that covered it covers nothing.
      const covering = await grant(ctx, id, CHANNEL);
      const revoked = await call(ctx, 'post', `/v1/objectives/${id}/grants/${covering.id}/revoke`, 'revokeObjectiveGrant', 200);
      assert.equal(revoked.status, 'revoked');
      const again = await call(ctx, 'post', `/v1/objectives/${id}/grants/${covering.id}/revoke`, 'revokeObjectiveGrant', 200);
      assert.equal(again.revoked_at, revoked.revoked_at);
      const listed = await call(ctx, 'get', `/v1/objectives/${id}/grants`, 'listObjectiveGrants', 200);
      assert.deepEqual(
        listed.data.map((g: Json) => g.status),
        ['active', 'revoked'],
      );
    });

    test('the policy revoked during a wake: the next consequential call is refused', async () => {
      const document = { ...POLICY, consequence_classes: ['external_effect'] };
      const steps = [{ tool_calls: [post(receiver.url, { n: 1 })] }, { tool_calls: [post(receiver.url, { n: 2 })], delay_ms: 1500 }];
      const { id, policy } = await gated(ctx, steps, document, [CHANNEL]);
      const wake = await call(ctx, 'post', `/v1/objectives/${id}/wake`, 'wakeObjective', 201, {});
      const key = (n: number) => receiver.keys.filter((k) => k.startsWith(`${wake.response_id}:`)).length >= n;
      for (let i = 0; i < 400 && !key(1); i++) await new Promise((r) => setTimeout(r, 25));
      assert.ok(key(1), 'the first post reached the receiver');
      await call(ctx, 'post', `/v1/objectives/${id}/policies/${policy.version}/revoke`, 'revokeObjectivePolicy', 200);
      const state = await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, wake.response_id, 40_000);
      const [first, second] = outputs(state);
      assert.equal(first.status, 200);
      assert.equal(second.rule, 'policy-revoked');
      assert.equal(receiver.keys.filter((k) => k.startsWith(`${wake.response_id}:`)).length, 1);
    });

    test('an interrupted non-idempotent MCP call is uncertain; a person settles it once', async () => {
      const document = { ...POLICY, consequence_classes: ['observe', 'destructive'], mcp_tools: ['fixture-stdio/exit'] };
      const { id } = await gated(
        ctx,
        [{ tool_calls: [{ name: 'mcp__fixture-stdio__exit', arguments: {} }] }],
        document,
        [{ type: 'mcp', locator: 'fixture-stdio/exit', access_mode: 'execute' }],
        [{ type: 'mcp', server_label: 'fixture-stdio', require_approval: 'never' }],
      );
      const state = await wakeAndSettle(ctx, id);
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      const [action] = await actions(ctx, id, '?status=uncertain');
      assert.ok(action, JSON.stringify(await actions(ctx, id)));
      assert.equal(action.class, 'destructive');
      assert.equal(action.target, 'fixture-stdio/exit');
      const path = `/v1/objectives/${id}/actions/${encodeURIComponent(action.id)}/resolve`;
      const settled = await call(ctx, 'post', path, 'resolveObjectiveAction', 200, { status: 'failed', evidence: 'the server restarted; nothing was written' });
      assert.equal(settled.status, 'failed');
      assert.equal(settled.resolved, true);
      const twice = await send(ctx, 'post', path, { status: 'succeeded' });
      assert.equal(twice.status, 409, twice.text);
      assert.equal((await actions(ctx, id))[0].status, 'failed', 'the second settling changed nothing');
    });

    test('bad input: grants, policies and pace that cannot hold, settling a succeeded action, secrets in a request', async () => {
      const document = { ...POLICY, consequence_classes: ['external_effect'] };
      const secretBody = { auth: { token: 'tok-SECRET-1' }, list: [{ password: 'pw-SECRET-2' }], env: { GITHUB_TOKEN: 'env-SECRET-3' }, note: 'kept' };
      const { id } = await gated(ctx, [{ tool_calls: [post(receiver.url, secretBody)] }], document, [CHANNEL]);
      for (const body of [
        { type: 'teleporter', locator: 'x', access_mode: 'read' },
        { type: 'channel', locator: '127.0.0.1', access_mode: 'admin' },
        { type: 'channel', locator: 'not a host', access_mode: 'write' },
        { type: 'command', locator: 'no-slash', access_mode: 'execute' },
        { type: 'filesystem', locator: '/srv/app', access_mode: 'read' },
        { type: 'filesystem', locator: 'box/repo/../etc', access_mode: 'read' },
        { type: 'channel', locator: '127.0.0.1', access_mode: 'write', expires_at: 1000 },
      ]) {
        const res = await send(ctx, 'post', `/v1/objectives/${id}/grants`, body);
        assert.ok(res.status === 400 || res.status === 422, `${JSON.stringify(body)}: ${res.status} ${res.text}`);
        assert.equal(res.headers['content-type']?.split(';')[0], 'application/problem+json');
      }
      // Outside the policy's scope: a write grant where only observe is allowed, an MCP tool outside mcp_tools.
      const narrow = await objective(ctx);
      await approvedPolicy(ctx, narrow.id, { ...POLICY, mcp_tools: ['docs/search'] });
      for (const body of [CHANNEL, { type: 'mcp', locator: 'docs/delete', access_mode: 'read' }]) {
        const res = await send(ctx, 'post', `/v1/objectives/${narrow.id}/grants`, body);
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.type, 'urn:palai:problem:invalid-request');
      }
      const grants = await call(ctx, 'get', `/v1/objectives/${narrow.id}/grants`, 'listObjectiveGrants', 200);
      assert.equal(grants.data.length, 0, 'nothing half-written');
      for (const bad of [
        { ...POLICY, quiet_hours: '25-07' },
        { ...POLICY, quiet_hours: '22:00-07:00' },
        { ...POLICY, max_actions_per_period: { count: -1, period_seconds: 60 } },
      ]) {
        const res = await send(ctx, 'post', `/v1/objectives/${narrow.id}/policies`, { document: bad });
        assert.ok(res.status === 400 || res.status === 422, res.text);
      }
      for (const pace of [{ burst_cap: -1 }, { base_backoff: 60, max_backoff: 10 }, { minimum_cooldown: -5 }]) {
        const res = await send(ctx, 'patch', `/v1/objectives/${narrow.id}`, { pace });
        assert.ok(res.status === 400 || res.status === 422, `${JSON.stringify(pace)}: ${res.text}`);
      }

      const state = await wakeAndSettle(ctx, id);
      assert.equal(outputs(state)[0].status, 200);
      const [action] = await actions(ctx, id);
      assert.equal(action.status, 'succeeded');
      assert.deepEqual(action.request.body, {
        auth: { token: '[redacted]' },
        list: [{ password: '[redacted]' }],
        env: { GITHUB_TOKEN: '[redacted]' },
        note: 'kept',
      });
      const { rows } = await ctx().hub.kernel.db.query<{ n: string }>("SELECT count(*) AS n FROM objective_actions WHERE request::text LIKE '%SECRET%'");
      assert.equal(Number(rows[0].n), 0, 'no secret in the journal');
      const res = await send(ctx, 'post', `/v1/objectives/${id}/actions/${encodeURIComponent(action.id)}/resolve`, { status: 'failed' });
      assert.equal(res.status, 409, res.text);
      const unknown = await send(ctx, 'post', `/v1/objectives/${id}/actions/resp_nope:call_nope/resolve`, { status: 'failed' });
      assert.equal(unknown.status, 404, unknown.text);
    });

    test('pace: burst_cap refuses past it in a wake; cooldown and backoff skip the next wake with that reason', async () => {
      const document = { ...POLICY, consequence_classes: ['external_effect'] };
      const watcher = await agent(ctx, {
        model: { provider: 'fake', script: [{ tool_calls: [post(receiver.url, { n: 1 }), post(receiver.url, { n: 2 })] }, { text: 'done' }] },
        tools: [{ type: 'builtin', name: 'http_post' }],
      });
      const burst = await objective(ctx, { agent: watcher, pace: { burst_cap: 1, minimum_cooldown: 3600 } });
      await approvedPolicy(ctx, burst.id, document);
      await grant(ctx, burst.id, CHANNEL);
      const [first, second] = outputs(await wakeAndSettle(ctx, burst.id));
      assert.equal(first.status, 200);
      assert.equal(second.rule, 'burst-cap');
      const cooled = await call(ctx, 'post', `/v1/objectives/${burst.id}/wake`, 'wakeObjective', 201, {});
      assert.equal(cooled.outcome, 'skipped');
      assert.equal(cooled.reason, 'cooldown');
      const shown = await call(ctx, 'get', `/v1/objectives/${burst.id}`, 'getObjective', 200);
      assert.equal(shown.pace.burst_cap, 1);
      assert.ok(shown.pace_state.next_wake_not_before > Date.now() / 1000 + 3000, JSON.stringify(shown.pace_state));

      // max_concurrency 1: of two calls of one step, the second is refused while the first is in flight.
      const concurrent = await objective(ctx, { agent: watcher });
      await approvedPolicy(ctx, concurrent.id, { ...document, max_concurrency: 1 });
      await grant(ctx, concurrent.id, CHANNEL);
      const [one, two] = outputs(await wakeAndSettle(ctx, concurrent.id));
      assert.equal(one.status, 200);
      assert.equal(two.rule, 'max-concurrency');

      const failing = await agent(ctx, { model: { provider: 'fake', script: [{ error: { status: 400, message: 'bad request' } }] } });
      const backed = await objective(ctx, { agent: failing, pace: { base_backoff: 600, max_backoff: 3600 } });
      await approvedPolicy(ctx, backed.id);
      assert.equal((await wakeAndSettle(ctx, backed.id)).status, 'failed');
      const skipped = await call(ctx, 'post', `/v1/objectives/${backed.id}/wake`, 'wakeObjective', 201, {});
      assert.equal(skipped.reason, 'backoff');
      const state = (await call(ctx, 'get', `/v1/objectives/${backed.id}`, 'getObjective', 200)).pace_state;
      assert.equal(state.failed_wakes, 1);
      assert.ok(state.next_wake_not_before > Date.now() / 1000 + 500 && state.next_wake_not_before <= Date.now() / 1000 + 601, JSON.stringify(state));
      // Without the backoff, the next wake goes.
      await call(ctx, 'patch', `/v1/objectives/${backed.id}`, 'updateObjective', 200, { pace: {} });
      assert.equal((await call(ctx, 'post', `/v1/objectives/${backed.id}/wake`, 'wakeObjective', 201, {})).outcome, 'admitted');
    });

    test("notifications: an uncertain action, a failed wake and the objective blocked reach the objective's webhook endpoint, signed, once each", async () => {
      const hooks = await startWebhookReceiver();
      try {
        const res = await ctx()
          .http.post('/v1/webhook_endpoints')
          .set(ctx().auth)
          .send({ url: `${hooks.url}/objectives`, events: ['response.completed'] });
        assert.equal(res.status, 201, res.text);
        const endpoint = res.body as { id: string; secret: string };
        const watcher = await agent(ctx, {
          model: {
            provider: 'fake',
            script: [{ tool_calls: [{ name: 'mcp__fixture-stdio__exit', arguments: {} }] }, { error: { status: 400, message: 'the model refused' } }],
          },
          tools: [{ type: 'mcp', server_label: 'fixture-stdio', require_approval: 'never' }],
        });
        const unknown = await send(ctx, 'post', '/v1/objectives', { agent: watcher, description: 'Watch.', notify: { webhook_endpoints: ['wh_nope'] } });
        assert.equal(unknown.status, 400, unknown.text);
        const { id } = await objective(ctx, { agent: watcher, notify: { webhook_endpoints: [endpoint.id] } });
        // However soon a pass runs, an objective born blocked until its first policy is approved announces nothing.
        assert.equal(await withSlice(ctx().hub, 'autonomy').scheduler.announce(), 0);
        const policy = await approvedPolicy(ctx, id, { ...POLICY, consequence_classes: ['observe', 'destructive'] });
        await grant(ctx, id, { type: 'mcp', locator: 'fixture-stdio/*', access_mode: 'execute' });
        const state = await wakeAndSettle(ctx, id);
        assert.equal(state.status, 'failed');
        await call(ctx, 'post', `/v1/objectives/${id}/policies/${policy.version}/revoke`, 'revokeObjectivePolicy', 200);
        const received = await hooks.waitFor(3, 20_000);
        const events = received.map((r) => verified(endpoint.secret, r) as Json);
        assert.deepEqual(events.map((e) => e.type).sort(), ['objective.action_uncertain', 'objective.blocked', 'objective.wake_failed']);
        assert.ok(events.every((e) => e.data.objective_id === id));
        const uncertain = events.find((e) => e.type === 'objective.action_uncertain')!;
        assert.equal(uncertain.data.response_id, state.id);
        assert.equal(uncertain.data.tool, 'mcp__fixture-stdio__exit');
        assert.match(events.find((e) => e.type === 'objective.wake_failed')!.data.reason, /the model refused/);
        assert.match(events.find((e) => e.type === 'objective.blocked')!.data.reason, /policy-revoked/);
        // Announced once: later passes find nothing new.
        assert.equal(await withSlice(ctx().hub, 'autonomy').scheduler.announce(), 0);
        await new Promise((r) => setTimeout(r, 1500));
        assert.equal(hooks.received.length, 3);
      } finally {
        await hooks.close();
      }
    });

    test('a run that names an objective it is no wake of has every call refused', async () => {
      const { id } = await gated(ctx, [], { ...POLICY, consequence_classes: ['external_effect'] }, [CHANNEL]);
      const poser = await agent(ctx, {
        model: { provider: 'fake', script: [{ tool_calls: [post(receiver.url)] }, { text: 'done' }] },
        tools: [{ type: 'builtin', name: 'http_post' }],
      });
      const before = receiver.keys.length;
      const admitted = await ctx().hub.api.responses.admit(ctx().projectId, {
        agent: poser,
        input: [{ role: 'user', content: 'go' }],
        options: { objective: id },
      });
      const state = await ctx().hub.api.responses.waitUntilSettled(ctx().projectId, admitted.id, 40_000);
      assert.equal(outputs(state)[0].rule, 'not-a-wake');
      assert.equal(receiver.keys.length, before);
      assert.equal((await actions(ctx, id)).length, 0, 'no action is journaled for it');
    });
  },
  {
    // Webhook endpoints keep their signing secrets encrypted.
    secretKey: 'action-gate-tests-secret-key-0123456789',
    mcpStdioServersFile: stdioServersFile([
      {
        name: 'fixture-stdio',
        command: process.execPath,
        args: ['--import', 'tsx', join(ROOT, 'tests', 'mcp', 'client-fixture-server.ts'), 'stdio'],
        env: {},
        cwd: ROOT,
        projects: null,
      },
    ]),
  },
);
