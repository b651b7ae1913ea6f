// Palai's client side: remote A2A agents registered under /v1/remote_agents
// (the card fetched through the egress guard, header values write-only), and
// called by a Palai agent as the tool `a2a__<name>` — against an agent served
// by the SDK's own DefaultRequestHandler. The remote answer is the tool's
// output, a remote input-required is Palai's waiting_for_input, and the
// answer goes back to the same remote task.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec } from '../support/spec.js';
import { listen, type Listening } from './a2a-client.js';
import { startPeerAgent, type PeerAgent } from './peer-agent.js';

const SECRET_KEY = 'remote-agents-test-secret';
const TOKEN = 'Bearer peer-token-0123456789abcdef';

await describeEachStore(
  'remote A2A agents',
  (ctx) => {
    let peer: PeerAgent;
    let quiet: PeerAgent;
    let self: Listening;
    before(async () => {
      peer = await startPeerAgent({ name: 'peer', requireHeader: ['authorization', TOKEN] });
      quiet = await startPeerAgent({ name: 'quiet', streaming: false });
      self = await listen(ctx().hub.app);
    });
    after(async () => {
      await peer.close();
      await quiet.close();
      await self.close();
    });

    const post = (path: string, body: object) => ctx().http.post(path).set(ctx().auth).send(body);
    const get = (path: string) => ctx().http.get(path).set(ctx().auth);
    const api = () => ctx().hub.api;
    const settled = (id: string) => api().responses.waitUntilSettled(ctx().projectId, id, 20_000);
    const toolOutput = (state: { output: Array<{ type: string }> }): string =>
      (state.output.find((item) => item.type === 'function_call_output') as { output: string } | undefined)?.output ?? '';

    test('registering fetches the card with the headers, keeps the header values write-only, and lists, reads and deletes', async () => {
      const res = await post('/v1/remote_agents', { name: 'peer', card_url: peer.cardUrl, headers: { Authorization: TOKEN } });
      assertMatchesSpec(res, 'createRemoteAgent');
      assert.equal(res.status, 201, res.text);
      assert.match(res.body.id, /^ragt_/);
      assert.deepEqual(res.body.card, { name: 'peer', description: 'A peer agent served by the A2A SDK.', version: '1.0.0', streaming: true });
      assert.deepEqual(res.body.headers, { Authorization: { set: true, last4: 'cdef' } });
      assert.ok(!JSON.stringify(res.body).includes('peer-token'), 'the value is never shown');
      assert.equal(peer.cardFetches.at(-1)?.authorization, TOKEN, 'the card was fetched with the headers');

      const one = await get(`/v1/remote_agents/peer`);
      assertMatchesSpec(one, 'getRemoteAgent');
      assert.equal(one.body.id, res.body.id);
      assert.equal((await get(`/v1/remote_agents/${res.body.id}`)).body.name, 'peer');
      const list = await get('/v1/remote_agents');
      assertMatchesSpec(list, 'listRemoteAgents');
      assert.deepEqual(
        list.body.data.map((a: { name: string }) => a.name),
        ['peer'],
      );
      const again = await post('/v1/remote_agents', { name: 'peer', card_url: peer.cardUrl });
      assert.equal(again.status, 409, again.text);

      const doomed = await post('/v1/remote_agents', { name: 'doomed', card_url: quiet.cardUrl });
      assert.equal(doomed.status, 201, doomed.text);
      const deleted = await ctx().http.delete('/v1/remote_agents/doomed').set(ctx().auth);
      assertMatchesSpec(deleted, 'deleteRemoteAgent');
      assert.deepEqual(deleted.body, { id: doomed.body.id, object: 'remote_agent.deleted', deleted: true });
      assert.equal((await get('/v1/remote_agents/doomed')).status, 404);
    });

    test('a card that cannot be had is refused and nothing is stored: not found, not a card, a refused address', async () => {
      const missing = await post('/v1/remote_agents', { name: 'missing', card_url: `${peer.url}/nowhere.json` });
      assert.equal(missing.status, 400, missing.text);
      assert.match(missing.body.detail, /HTTP 40\d/);
      const metadata = await post('/v1/remote_agents', { name: 'metadata', card_url: 'http://169.254.169.254/.well-known/agent-card.json' });
      assert.equal(metadata.status, 403, metadata.text);
      assert.match(metadata.body.type, /egress-denied/);
      const badName = await post('/v1/remote_agents', { name: 'ragt_x', card_url: peer.cardUrl });
      assert.equal(badName.status, 400, badName.text);
      const names = (await get('/v1/remote_agents')).body.data.map((a: { name: string }) => a.name);
      assert.ok(!names.includes('missing') && !names.includes('metadata'));
    });

    test('an agent calls the remote agent as a2a__<name>: the message goes once, with its idempotency key and headers, and the answer is the output', async () => {
      await createAgent(ctx, {
        name: 'delegator',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'a2a__peer', arguments: { message: 'hello there' } }] }, { text: 'done' }] },
        tools: [{ type: 'a2a', remote_agent: 'peer' }],
      });
      const before = peer.executor.received.length;
      const admitted = await api().responses.admit(ctx().projectId, { agent: 'delegator', input: [{ role: 'user', content: 'go' }] });
      const state = await settled(admitted.id);
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      assert.equal(toolOutput(state), 'peer says: hello there');
      const sent = peer.executor.received.slice(before);
      assert.equal(sent.length, 1);
      const call = state.output.find((item) => item.type === 'function_call') as { call_id: string };
      assert.equal(sent[0].messageId, `${admitted.id}:${call.call_id}`, "the message id is the call's idempotency key");
      assert.equal(sent[0].headers.authorization, TOKEN);
      const row = (
        await ctx().hub.kernel.db.query<{ checkpoint: { task_id: string } }>('SELECT checkpoint FROM tool_calls WHERE response_id = $1', [admitted.id])
      ).rows[0];
      assert.equal(row.checkpoint.task_id, sent[0].taskId, 'the remote task id was committed');
    });

    test("a remote input-required is Palai's waiting_for_input, and the answer goes to the same remote task", async () => {
      await createAgent(ctx, {
        name: 'asker',
        model: { provider: 'fake', script: [{ tool_calls: [{ name: 'a2a__peer', arguments: { message: 'ask:Which city?' } }] }, { text: 'noted' }] },
        tools: [{ type: 'a2a', remote_agent: 'peer' }],
      });
      const before = peer.executor.received.length;
      const admitted = await api().responses.admit(ctx().projectId, { agent: 'asker', input: [{ role: 'user', content: 'go' }] });
      let state = await settled(admitted.id);
      assert.equal(state.status, 'waiting_for_input');
      assert.equal(state.pending_calls[0].question, 'Which city?');
      await api().responses.submitInput(ctx().projectId, admitted.id, { input: 'Oslo' });
      state = await settled(admitted.id);
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      assert.equal(toolOutput(state), 'answered: Oslo');
      const sent = peer.executor.received.slice(before);
      assert.deepEqual(
        sent.map((r) => r.text),
        ['ask:Which city?', 'Oslo'],
      );
      assert.equal(sent[1].taskId, sent[0].taskId);
    });

    test('an agent that cannot stream is read until it settles; a remote failure is a tool error the model sees', async () => {
      assert.equal((await post('/v1/remote_agents', { name: 'quiet', card_url: quiet.cardUrl })).status, 201);
      await createAgent(ctx, {
        name: 'quiet-caller',
        model: {
          provider: 'fake',
          script: [
            { tool_calls: [{ name: 'a2a__quiet', arguments: { message: 'polled' } }] },
            { tool_calls: [{ name: 'a2a__quiet', arguments: { message: 'fail:out of paper' } }] },
            { text: 'done' },
          ],
        },
        tools: [{ type: 'a2a', remote_agent: 'quiet' }],
      });
      const admitted = await api().responses.admit(ctx().projectId, { agent: 'quiet-caller', input: [{ role: 'user', content: 'go' }] });
      const state = await settled(admitted.id);
      assert.equal(state.status, 'completed');
      const outputs = state.output.filter((i) => i.type === 'function_call_output').map((i) => (i as { output: string }).output);
      assert.equal(outputs[0], 'peer says: polled');
      assert.match(outputs[1], /failed: out of paper/);
    });

    const ask = (question: string) => ({ tool_calls: [{ name: 'ask_user', arguments: { question } }] });

    /** A Palai agent `inner` of this hub playing `script`, registered as a remote agent, and an agent `outer` that calls it once; the registration's answer. */
    async function palaiRemote(inner: string, outer: string, script: unknown[]) {
      await createAgent(ctx, { name: inner, model: { provider: 'fake', script }, tools: [{ type: 'builtin', name: 'ask_user' }] });
      const registered = await post('/v1/remote_agents', {
        name: inner,
        card_url: `${self.url}/a2a/${inner}/.well-known/agent-card.json`,
        headers: { Authorization: `Bearer ${ctx().apiKey}` },
      });
      assert.equal(registered.status, 201, registered.text);
      await createAgent(ctx, {
        name: outer,
        model: { provider: 'fake', script: [{ tool_calls: [{ name: `a2a__${inner}`, arguments: { message: 'start' } }] }, { text: 'outer done' }] },
        tools: [{ type: 'a2a', remote_agent: inner }],
      });
      return registered;
    }

    test('a Palai agent is a remote agent too: its 1.0 card, its key as a header, and its question answered across', async () => {
      const registered = await palaiRemote('inner', 'outer', [ask('Which year?'), { text: 'inner done' }]);
      assert.equal(registered.body.card.name, 'inner');
      const outer = await api().responses.admit(ctx().projectId, { agent: 'outer', input: [{ role: 'user', content: 'go' }] });
      let state = await settled(outer.id);
      assert.equal(state.status, 'waiting_for_input');
      assert.equal(state.pending_calls[0].question, 'Which year?');
      await api().responses.submitInput(ctx().projectId, outer.id, { input: '1999' });
      state = await settled(outer.id);
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      assert.equal(toolOutput(state), 'inner done');
      // The inner task is a response of the same project: one, answered once.
      const inner = await api().responses.list(ctx().projectId, { agent: 'inner' }, { limit: 10 });
      assert.equal(inner.data.length, 1);
      assert.equal(inner.data[0].status, 'completed');
    });

    test('a remote Palai agent that asks twice: each question reaches the caller and each answer goes across', async () => {
      await palaiRemote('innertwice', 'outertwice', [ask('Which year?'), ask('Which month?'), { text: 'inner twice done' }]);
      const outer = await api().responses.admit(ctx().projectId, { agent: 'outertwice', input: [{ role: 'user', content: 'go' }] });
      let state = await settled(outer.id);
      assert.equal(state.pending_calls[0]?.question, 'Which year?');
      await api().responses.submitInput(ctx().projectId, outer.id, { input: '1999' });
      state = await settled(outer.id);
      assert.equal(state.status, 'waiting_for_input', 'the second question is a question too');
      assert.equal(state.pending_calls[0].question, 'Which month?');
      await api().responses.submitInput(ctx().projectId, outer.id, { input: 'May' });
      state = await settled(outer.id);
      assert.equal(state.status, 'completed', JSON.stringify(state.error));
      assert.equal(toolOutput(state), 'inner twice done');
    });

    test('an agent naming a remote agent that is not registered fails, saying which', async () => {
      await createAgent(ctx, { name: 'orphan', model: { provider: 'fake' }, tools: [{ type: 'a2a', remote_agent: 'nobody' }] });
      const admitted = await api().responses.admit(ctx().projectId, { agent: 'orphan', input: [{ role: 'user', content: 'go' }] });
      const state = await settled(admitted.id);
      assert.equal(state.status, 'failed');
      assert.match(state.error!.message, /"nobody"/);
    });
  },
  { secretKey: SECRET_KEY },
);
