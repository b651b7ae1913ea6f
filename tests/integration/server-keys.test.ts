// The server's own provider keys go only where the operator said. For each
// provider and each way an API caller can choose a URL (an agent's base_url; a
// connection reading api_key_env with a base_url), a receiver at the caller's
// URL must never see the server key — while the operator's URL does get it, and a
// key the caller stored goes to the caller's URL as before.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore, type TestHub } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';
import { startAnthropicServer } from '../support/wire/anthropic-server.js';
import { OpenAIWireServer } from '../support/wire/openai-server.js';

/** Recognisable, so a test can prove where they went. */
const SERVER_KEYS = { OPENAI_API_KEY: 'sk-server-openai-bound-3c9e1a7f5b2d4e60', ANTHROPIC_API_KEY: 'sk-ant-server-bound-7a1c5e9f3b2d6e48' };
const STORED_KEY = 'sk-caller-stored-key-2b4d6f8a1c3e5a70';
const SECRET_KEY = 'server-keys-test-secret';

/** The operator's provider URLs (OPENAI_BASE_URL, ANTHROPIC_BASE_URL), and receivers at URLs an API caller chose. */
const [operatorOpenAI, callerOpenAI, operatorAnthropic, callerAnthropic] = await Promise.all([
  OpenAIWireServer.start(),
  OpenAIWireServer.start(),
  startAnthropicServer(),
  startAnthropicServer(),
]);
const servers = [operatorOpenAI, callerOpenAI, operatorAnthropic, callerAnthropic];
after(() => Promise.all(servers.map((server) => server.close())));

interface WireServer {
  requests: { headers: IncomingHttpHeaders }[];
}

interface ProviderCase {
  provider: 'openai' | 'openai-chat' | 'anthropic';
  variable: keyof typeof SERVER_KEYS;
  scenario: string;
  operator: WireServer & { baseUrl: string };
  caller: WireServer & { baseUrl: string };
  /** The operator's URL as a caller might write it: the same endpoint, spelled differently. */
  operatorRespelled: () => string;
}

const CASES: ProviderCase[] = [
  {
    provider: 'openai',
    variable: 'OPENAI_API_KEY',
    scenario: 'scenario-text',
    operator: operatorOpenAI,
    caller: callerOpenAI,
    operatorRespelled: () => `${operatorOpenAI.baseUrl}/`,
  },
  {
    provider: 'openai-chat',
    variable: 'OPENAI_API_KEY',
    scenario: 'scenario-text',
    operator: operatorOpenAI,
    caller: callerOpenAI,
    operatorRespelled: () => `${operatorOpenAI.baseUrl}/`,
  },
  {
    provider: 'anthropic',
    variable: 'ANTHROPIC_API_KEY',
    scenario: 'text',
    operator: operatorAnthropic,
    caller: callerAnthropic,
    operatorRespelled: () => `${operatorAnthropic.baseUrl}/v1/`,
  },
];

/** What a request carried as its credential, in either header the SDKs use. */
const credentialsOf = (headers: IncomingHttpHeaders): string => `${headers.authorization ?? ''} ${headers['x-api-key'] ?? ''}`;

function assertNoServerKey(requests: { headers: IncomingHttpHeaders }[]): void {
  assert.ok(requests.length > 0, 'the receiver was called');
  for (const { headers } of requests) {
    for (const key of Object.values(SERVER_KEYS))
      assert.ok(!JSON.stringify(headers).includes(key), `a server key reached the caller's URL: ${credentialsOf(headers)}`);
  }
}

/** The requests `server` received while `work` ran. */
async function receivedDuring<T>(server: WireServer, work: () => Promise<T>): Promise<{ result: T; requests: WireServer['requests'] }> {
  const earlier = server.requests.length;
  const result = await work();
  return { result, requests: server.requests.slice(earlier) };
}

async function postConnection(ctx: () => TestHub, body: Record<string, unknown>) {
  const res = await ctx().http.post('/v1/model_connections').set(ctx().auth).send(body);
  assertMatchesSpec(res, 'createModelConnection');
  return res;
}

await describeEachStore(
  'server keys go only where the operator said',
  (ctx) => {
    before(() => {
      operatorOpenAI.reset();
      callerOpenAI.reset();
      operatorAnthropic.reset();
      callerAnthropic.reset();
    });

    const run = async (agent: string) => {
      const res = await respond(ctx, { model: agent, input: 'hi' });
      assert.equal(res.status, 'completed', JSON.stringify(res.error));
      return res;
    };

    for (const p of CASES) {
      describe(p.provider, () => {
        const key = SERVER_KEYS[p.variable];

        test("an agent's base_url chosen by the caller: the call goes there without the server key", async () => {
          await createAgent(ctx, { name: `${p.provider}-caller-url`, model: { provider: p.provider, name: p.scenario, base_url: p.caller.baseUrl } });
          const { requests } = await receivedDuring(p.caller, () => run(`${p.provider}-caller-url`));
          assert.equal(requests.length, 1);
          assertNoServerKey(requests);
        });

        test("an agent without base_url goes to the operator's URL with the server key, as does that URL spelled differently", async () => {
          await createAgent(ctx, { name: `${p.provider}-operator-url`, model: { provider: p.provider, name: p.scenario } });
          await createAgent(ctx, { name: `${p.provider}-respelled`, model: { provider: p.provider, name: p.scenario, base_url: p.operatorRespelled() } });
          for (const agent of [`${p.provider}-operator-url`, `${p.provider}-respelled`]) {
            const { requests } = await receivedDuring(p.operator, () => run(agent));
            assert.equal(requests.length, 1, agent);
            assert.ok(credentialsOf(requests[0].headers).includes(key), `${agent}: the operator's URL got the key`);
          }
        });

        test('a connection reading api_key_env with a base_url elsewhere is refused at creation: 400 at /base_url', async () => {
          const res = await postConnection(ctx, {
            name: `${p.provider}-env-elsewhere`,
            provider: p.provider,
            api_key_env: p.variable,
            base_url: p.caller.baseUrl,
          });
          assertProblem(res, 400, 'invalid-request');
          assert.equal(res.body.errors[0].pointer, '/base_url');
          assert.match(res.body.detail, new RegExp(`The key from ${p.variable} may be sent only to`));
          const fetched = await ctx().http.get(`/v1/model_connections/${p.provider}-env-elsewhere`).set(ctx().auth);
          assert.equal(fetched.status, 404, 'nothing was stored');
        });

        test('such a connection already stored (the binding changed since), or one overridden by the agent: the run fails saying why, and the key is never sent', async () => {
          await ctx().hub.kernel.db.query(
            'INSERT INTO model_connections (id, project_id, name, provider, base_url, api_key_env) VALUES ($1, $2, $3, $4, $5, $6)',
            [`mconn_${p.provider.replace('-', '_')}_stale`, ctx().projectId, `${p.provider}-stale`, p.provider, p.caller.baseUrl, p.variable],
          );
          const env = await postConnection(ctx, { name: `${p.provider}-env`, provider: p.provider, api_key_env: p.variable, default_model: p.scenario });
          assert.equal(env.status, 201, env.text);
          await createAgent(ctx, { name: `${p.provider}-via-stale`, model: { connection: `${p.provider}-stale`, name: p.scenario } });
          await createAgent(ctx, { name: `${p.provider}-via-overridden`, model: { connection: `${p.provider}-env`, base_url: p.caller.baseUrl } });
          for (const agent of [`${p.provider}-via-stale`, `${p.provider}-via-overridden`]) {
            const { result: res, requests } = await receivedDuring(p.caller, () => respond(ctx, { model: agent, input: 'hi' }));
            assert.equal(res.status, 'failed', agent);
            assert.equal(res.error.code, 'model-provider-error');
            assert.match(res.error.message, new RegExp(`would send the server's key from ${p.variable} to .*; the key was not sent`));
            assert.equal(requests.length, 0, `${agent}: the caller's URL was not called`);
            assert.ok(!JSON.stringify(res).includes(key));
          }
        });

        test("a connection reading api_key_env without a base_url goes to the variable's URL with its key", async () => {
          await createAgent(ctx, { name: `${p.provider}-via-env`, model: { connection: `${p.provider}-env` } });
          const { requests } = await receivedDuring(p.operator, () => run(`${p.provider}-via-env`));
          assert.equal(requests.length, 1);
          assert.ok(credentialsOf(requests[0].headers).includes(key));
        });

        test("a connection without a key of its own at a caller's base_url calls without the server key", async () => {
          const res = await postConnection(ctx, { name: `${p.provider}-keyless`, provider: p.provider, base_url: p.caller.baseUrl, default_model: p.scenario });
          assert.equal(res.status, 201, res.text);
          await createAgent(ctx, { name: `${p.provider}-via-keyless`, model: { connection: `${p.provider}-keyless` } });
          const { requests } = await receivedDuring(p.caller, () => run(`${p.provider}-via-keyless`));
          assert.equal(requests.length, 1);
          assertNoServerKey(requests);
        });

        test("a key the caller stored goes to the caller's base_url", async () => {
          const res = await postConnection(ctx, {
            name: `${p.provider}-stored`,
            provider: p.provider,
            base_url: p.caller.baseUrl,
            api_key: STORED_KEY,
            default_model: p.scenario,
          });
          assert.equal(res.status, 201, res.text);
          await createAgent(ctx, { name: `${p.provider}-via-stored`, model: { connection: `${p.provider}-stored` } });
          const { requests } = await receivedDuring(p.caller, () => run(`${p.provider}-via-stored`));
          assert.equal(requests.length, 1);
          assert.ok(credentialsOf(requests[0].headers).includes(STORED_KEY));
          assertNoServerKey(requests);
        });
      });
    }
  },
  {
    secretKey: SECRET_KEY,
    openaiBaseUrl: operatorOpenAI.baseUrl,
    anthropicBaseUrl: operatorAnthropic.baseUrl,
    keyEnvAllowlist: [
      { variable: 'OPENAI_API_KEY', baseUrl: operatorOpenAI.baseUrl },
      { variable: 'ANTHROPIC_API_KEY', baseUrl: operatorAnthropic.baseUrl },
    ],
  },
  // The hub's environment, which it takes its provider keys from when it starts.
  { env: SERVER_KEYS },
);
