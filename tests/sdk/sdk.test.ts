// @palai/sdk against a running hub on a real port, on both stores: the typed
// calls of every resource, problems thrown as PalaiApiError, a streamed
// response that survives its connection being cut mid-stream, an approval
// answered, and a POST whose answer was lost to a 503 retried without a second
// response.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPalai, PalaiApiError, type Palai, type ResponseStreamEvent } from '../../sdk/src/index.js';
import { startPeerAgent, type PeerAgent } from '../a2a/peer-agent.js';
import { startFixtureHttpServer, type FixtureHttpServer } from '../mcp/client-fixture-server.js';
import { startFakeSlackApi, type FakeSlackApi } from '../slack/fake-slack-api.js';
import { describeEachStore } from '../support/hub.js';
import { listen, type Listening } from '../support/listen.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const STORY = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen';

// The peers some resources name: a Slack API, an MCP server, an A2A agent.
let slack: FakeSlackApi;
let mcp: FixtureHttpServer;
let peer: PeerAgent;
before(async () => {
  slack = await startFakeSlackApi();
  mcp = await startFixtureHttpServer();
  peer = await startPeerAgent({ name: 'peer' });
});
after(async () => {
  await slack.close();
  await mcp.close();
  await peer.close();
});

await describeEachStore(
  'the SDK against a hub',
  (ctx) => {
    let server: Listening;
    let proxy: TcpProxy;
    let palai: Palai;
    /** Every request the SDK sent, in order. */
    const sent: Array<{ method: string; url: string; key: string | null }> = [];
    const spying: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      sent.push({ method: request.method, url: request.url, key: request.headers.get('idempotency-key') });
      return fetch(request);
    };

    before(async () => {
      server = await listen(ctx().hub.app);
      proxy = await TcpProxy.start('127.0.0.1', Number(new URL(server.url).port));
      // Through the proxy, so a test can cut the connections; retries waiting a few milliseconds.
      palai = createPalai({ baseUrl: `http://127.0.0.1:${proxy.port}/v1`, apiKey: ctx().apiKey, fetch: spying, retry: { baseDelayMs: 5, maxDelayMs: 50 } });
      await palai.POST('/v1/agents', { body: { name: 'plain', model: { provider: 'fake' } } });
    });
    after(async () => {
      await proxy.close();
      await server.close();
    });

    test('every resource: create, list and get through the typed calls', async () => {
      const agent = await palai.POST('/v1/agents', {
        body: { name: 'typed', instructions: 'Be brief.', model: { provider: 'fake', script: [{ text: 'hello there' }] } },
      });
      assert.equal(agent.name, 'typed');
      assert.equal((await palai.GET('/v1/agents/{agent}', { params: { path: { agent: 'typed' } } })).id, agent.id);
      const updated = await palai.POST('/v1/agents/{agent}', {
        params: { path: { agent: agent.id } },
        body: { instructions: 'Be briefer.', model: { provider: 'fake', script: [{ text: 'hello there' }] } },
      });
      assert.equal(updated.revision, 2);
      const revisions = await palai.GET('/v1/agents/{agent}/revisions', { params: { path: { agent: agent.id } } });
      assert.deepEqual(
        revisions.data.map((r) => r.revision),
        [1, 2],
      );
      assert.ok((await palai.GET('/v1/agents')).data.some((a) => a.id === agent.id));

      const session = await palai.POST('/v1/sessions', { body: { agent: 'typed' } });
      const response = await palai.POST('/v1/responses', { body: { model: 'typed', input: 'hi', session_id: session.id } });
      assert.equal(response.palai_status, 'completed');
      assert.equal(response.output_text, 'hello there');
      assert.equal((await palai.GET('/v1/responses/{response_id}', { params: { path: { response_id: response.id } } })).id, response.id);
      const listed = await palai.GET('/v1/responses', { params: { query: { agent: 'typed', limit: 5 } } });
      assert.deepEqual(
        listed.data.map((r) => r.id),
        [response.id],
      );
      const inputs = await palai.GET('/v1/responses/{response_id}/input_items', { params: { path: { response_id: response.id } } });
      assert.equal(inputs.data.length, 1);
      assert.equal((await palai.GET('/v1/sessions/{session_id}', { params: { path: { session_id: session.id } } })).id, session.id);
      const items = await palai.GET('/v1/sessions/{session_id}/items', { params: { path: { session_id: session.id } } });
      assert.ok(items.data.length >= 2, 'the question and the answer');

      const conversation = await palai.POST('/v1/conversations', { body: { metadata: { topic: 'sdk' } } });
      assert.equal((await palai.GET('/v1/conversations/{conversation_id}', { params: { path: { conversation_id: conversation.id } } })).id, conversation.id);

      const connection = await palai.POST('/v1/model_connections', { body: { name: 'local', provider: 'fake' } });
      assert.equal((await palai.GET('/v1/model_connections/{connection}', { params: { path: { connection: connection.id } } })).name, 'local');
      assert.ok((await palai.GET('/v1/model_connections')).data.some((c) => c.id === connection.id));

      const endpoint = await palai.POST('/v1/webhook_endpoints', { body: { url: 'http://127.0.0.1:9/hook', events: ['response.completed'] } });
      assert.equal((await palai.GET('/v1/webhook_endpoints/{endpoint}', { params: { path: { endpoint: endpoint.id } } })).url, endpoint.url);
      assert.ok((await palai.GET('/v1/webhook_endpoints')).data.some((e) => e.id === endpoint.id));
      const deliveries = await palai.GET('/v1/webhook_endpoints/{endpoint}/deliveries', { params: { path: { endpoint: endpoint.id } } });
      assert.ok(Array.isArray(deliveries.data));
      const outbox = await palai.GET('/v1/outbox_deliveries', { params: { query: { consumer: 'webhook', limit: 10 } } });
      assert.equal(outbox.object, 'list');

      const consumer = await palai.POST('/v1/queue_consumers', {
        body: { name: 'jobs', kind: 'sqs', agent: 'typed', paused: true, sqs: { queue_url: 'http://127.0.0.1:9/000000000000/jobs' } },
      });
      assert.equal((await palai.GET('/v1/queue_consumers/{queue_consumer}', { params: { path: { queue_consumer: consumer.id } } })).name, 'jobs');
      assert.ok((await palai.GET('/v1/queue_consumers')).data.some((c) => c.id === consumer.id));

      const bot = await palai.POST('/v1/slack_bots', {
        body: { name: 'helper', agent: 'typed', bot_token: 'xoxb-sdk-test', signing_secret: 'sdk-signing-secret', api_url: slack.url },
      });
      assert.equal((await palai.GET('/v1/slack_bots/{slack_bot}', { params: { path: { slack_bot: bot.id } } })).name, 'helper');
      assert.ok((await palai.GET('/v1/slack_bots')).data.some((b) => b.id === bot.id));

      const enrollment = await palai.POST('/v1/node_enrollments', { body: { name: 'laptop' } });
      assert.ok(enrollment.token, 'the enrollment token is shown once');
      assert.ok((await palai.GET('/v1/node_enrollments')).data.some((e) => e.id === enrollment.id));
      assert.ok(Array.isArray((await palai.GET('/v1/nodes')).data));

      const objective = await palai.POST('/v1/objectives', { body: { agent: agent.id, description: 'Watch the build.' } });
      assert.equal((await palai.GET('/v1/objectives/{objective}', { params: { path: { objective: objective.id } } })).id, objective.id);
      assert.ok((await palai.GET('/v1/objectives')).data.some((o) => o.id === objective.id));
      assert.deepEqual((await palai.GET('/v1/objectives/{objective}/wakes', { params: { path: { objective: objective.id } } })).data, []);

      const secret = await palai.POST('/v1/secrets', { body: { name: 'github', value: 'ghp_sdk_value_never_shown' } });
      const secrets = await palai.GET('/v1/secrets');
      assert.ok(secrets.data.some((s) => s.id === secret.id));
      assert.ok(!JSON.stringify(secrets).includes('ghp_sdk_value_never_shown'), 'a secret value is never answered');

      const server = await palai.POST('/v1/mcp_servers', { body: { name: 'fixture', url: mcp.url } });
      assert.equal((await palai.GET('/v1/mcp_servers/{mcp_server}', { params: { path: { mcp_server: server.id } } })).name, 'fixture');
      assert.ok((await palai.GET('/v1/mcp_servers')).data.some((m) => m.id === server.id));
      const tools = await palai.GET('/v1/mcp_servers/{mcp_server}/tools', { params: { path: { mcp_server: 'fixture' } } });
      assert.ok(tools.data.length > 0, 'the server lists its tools');

      const remote = await palai.POST('/v1/remote_agents', { body: { name: 'peer', card_url: peer.cardUrl } });
      assert.equal((await palai.GET('/v1/remote_agents/{remote_agent}', { params: { path: { remote_agent: remote.id } } })).name, 'peer');
      assert.ok((await palai.GET('/v1/remote_agents')).data.some((r) => r.id === remote.id));
    });

    test('a problem is thrown as a PalaiApiError with its type, status, field errors and OpenAI error member', async () => {
      const missing = await palai.GET('/v1/agents/{agent}', { params: { path: { agent: 'nobody' } } }).catch((error: unknown) => error);
      assert.ok(missing instanceof PalaiApiError);
      assert.equal(missing.status, 404);
      assert.match(missing.type, /^urn:palai:problem:/);
      assert.equal(missing.error?.type, 'not_found_error');

      const invalid = await palai.POST('/v1/agents', { body: { name: 'bad name!', model: { provider: 'fake' } } }).catch((error: unknown) => error);
      assert.ok(invalid instanceof PalaiApiError);
      assert.equal(invalid.status, 400);
      assert.equal(invalid.slug, 'validation-failed');
      assert.ok(
        invalid.errors.some((e) => e.pointer === '/name'),
        JSON.stringify(invalid.errors),
      );
      assert.equal(invalid.error?.param, 'name');
      // The raw client answers the same problem without throwing.
      const raw = await palai.api.GET('/v1/agents/{agent}', { params: { path: { agent: 'nobody' } } });
      assert.equal(raw.response.status, 404);
      assert.equal(raw.data, undefined);
    });

    test('a streamed response whose connection is cut mid-stream is resumed: every event once, in order', async () => {
      // 100 ms between words: the run is still streaming for over a second after the first cut.
      await palai.POST('/v1/agents', { body: { name: 'storyteller', model: { provider: 'fake', script: [{ text: STORY, delay_ms: 100 }] } } });
      const before = sent.length;
      const events: ResponseStreamEvent[] = [];
      let cutAfter = -1;
      for await (const event of palai.responses.stream({ model: 'storyteller', input: 'tell me' })) {
        events.push(event);
        const deltas = events.filter((e) => e.type === 'response.output_text.delta').length;
        if (deltas === 3 && cutAfter === -1) {
          assert.ok(proxy.resetAll() > 0, 'the stream was live');
          cutAfter = event.sequence_number;
        }
        // A second cut, wherever the stream then is (possibly between connections).
        if (deltas === 8) proxy.resetAll();
      }
      const sequence = events.map((e) => e.sequence_number);
      assert.deepEqual(
        sequence,
        sequence.map((_, i) => i),
        'no event missing, none twice',
      );
      assert.equal(events[0].type, 'response.created');
      assert.equal(events.at(-1)!.type, 'response.completed');
      const text = events.map((e) => (e.type === 'response.output_text.delta' ? e.delta : '')).join('');
      assert.equal(text, STORY);
      // The first connection was the POST; the first resume read the journal after the last event seen before the cut.
      const mine = sent.slice(before);
      assert.equal(mine[0].method, 'POST');
      const resumes = mine.filter((r) => r.method === 'GET' && r.url.includes('/events?starting_after='));
      assert.ok(resumes.length >= 1, JSON.stringify(mine));
      assert.equal(new URL(resumes[0].url).searchParams.get('starting_after'), String(cutAfter));
      const id = (events[0] as Extract<ResponseStreamEvent, { response: unknown }>).response.id;
      assert.equal((await palai.GET('/v1/responses', { params: { query: { agent: 'storyteller' } } })).data.length, 1, 'one response');
      assert.equal((await palai.responses.wait(id)).output_text, STORY);
    });

    test('an approval answered through the SDK resumes the run, and wait() sees it settle', async () => {
      await palai.POST('/v1/agents', {
        body: {
          name: 'careful',
          tools: [{ type: 'builtin', name: 'echo' }],
          approval: { tools: ['echo'] },
          model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'ship it' } }] }, { text: 'shipped' }] },
        },
      });
      const queued = await palai.POST('/v1/responses', { body: { model: 'careful', input: 'ship', background: true } });
      const waiting = await palai.responses.wait(queued.id, { timeoutMs: 30_000 });
      assert.equal(waiting.palai_status, 'waiting_for_approval');
      const [call] = waiting.required_action!.calls;
      assert.equal(call.name, 'echo');
      assert.deepEqual(JSON.parse(call.arguments), { text: 'ship it' });

      await palai.POST('/v1/responses/{response_id}/approvals', {
        params: { path: { response_id: queued.id } },
        body: { call_id: call.call_id, decision: 'approve' },
      });
      const done = await palai.responses.wait(queued.id, { timeoutMs: 30_000 });
      assert.equal(done.palai_status, 'completed');
      assert.equal(done.output_text, 'shipped');
    });

    test('a POST whose answer was lost to a 503 is retried with its Idempotency-Key: one response, the same id', async () => {
      const log: string[] = [];
      let lost = false;
      // The hub admits the first request; its answer is replaced on the way back by an outage's problem.
      const losing: typeof fetch = async (input, init) => {
        const request = new Request(input, init);
        log.push(request.headers.get('idempotency-key') ?? '');
        const answer = await fetch(request);
        if (request.method !== 'POST' || lost) return answer;
        lost = true;
        await answer.arrayBuffer();
        const problem = { type: 'urn:palai:problem:store-unavailable', title: 'Store unavailable', status: 503, detail: 'The database could not be reached.' };
        return new Response(JSON.stringify(problem), { status: 503, headers: { 'content-type': 'application/problem+json', 'retry-after': '0' } });
      };
      const flaky = createPalai({ baseUrl: server.url, apiKey: ctx().apiKey, fetch: losing, retry: { baseDelayMs: 5 } });
      await flaky.POST('/v1/agents', { body: { name: 'once', model: { provider: 'fake' } } });
      lost = false;
      log.length = 0;
      const response = await flaky.POST('/v1/responses', { body: { model: 'once', input: 'only once' } });
      assert.equal(log.length, 2, 'sent twice');
      assert.ok(log[0].length > 0 && log[0] === log[1], 'with one Idempotency-Key');
      const all = await flaky.GET('/v1/responses', { params: { query: { agent: 'once' } } });
      assert.deepEqual(
        all.data.map((r) => r.id),
        [response.id],
        'the retry answered for the response the first attempt admitted',
      );

      // A problem a retry cannot help is thrown at once.
      log.length = 0;
      await assert.rejects(flaky.POST('/v1/responses', { body: { model: 'nobody', input: 'x' } }), (error: unknown) => {
        assert.ok(error instanceof PalaiApiError && error.status === 404, String(error));
        return true;
      });
      assert.equal(log.length, 1);
    });
  },
  // Webhook endpoints and Slack bots keep their secrets encrypted with it.
  { secretKey: 'sdk-tests-secret-key-0123456789' },
);
