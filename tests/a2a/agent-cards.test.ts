// Agent cards: one per agent under /a2a/{agent}/, built from its spec, behind
// the project key unless the agent made its card public (fetched by id); and a
// listing of the project's cards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentCard } from '@a2a-js/sdk';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

await describeEachStore('A2A agent cards', (ctx) => {
  test('a card is built from the agent spec, with both bindings at their URLs under /a2a/{agent}/', async () => {
    const agent = await createAgent(ctx, { name: 'carded', description: 'Answers questions about cards.', model: { provider: 'fake' } });
    const res = await ctx().http.get('/a2a/carded/.well-known/agent-card.json').set(ctx().auth).set('A2A-Version', '1.0');
    assert.equal(res.status, 200, res.text);
    const card = AgentCard.fromJSON(res.body);
    assert.equal(card.name, 'carded');
    assert.equal(card.description, 'Answers questions about cards.');
    assert.equal(card.version, String(agent.revision));
    assert.equal(card.capabilities?.streaming, true);
    assert.deepEqual(card.defaultOutputModes, ['text/plain']);
    assert.equal(card.skills.length, 1);
    const base = res.body.supportedInterfaces[0].url.replace(/\/jsonrpc$/, '');
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+\/a2a\/carded$/);
    assert.deepEqual(
      card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url.slice(base.length)]),
      [
        ['JSONRPC', '1.0', '/jsonrpc'],
        ['HTTP+JSON', '1.0', '/rest'],
        ['JSONRPC', '0.3', '/jsonrpc'],
        ['HTTP+JSON', '0.3', '/rest'],
      ],
    );
    assert.equal(res.body.securitySchemes.bearer.httpAuthSecurityScheme.scheme, 'Bearer');
    assert.deepEqual(Object.keys(res.body.securityRequirements[0].schemes), ['bearer']);

    const byId = await ctx().http.get(`/a2a/${agent.id}/.well-known/agent-card.json`).set(ctx().auth);
    assert.equal(byId.status, 200);
    assert.equal(byId.body.name, 'carded');

    const legacy = await ctx().http.get('/a2a/carded/.well-known/agent-card.json').set(ctx().auth).set('A2A-Version', '0.3');
    assert.equal(legacy.status, 200, legacy.text);
    assert.equal(legacy.body.protocolVersion, '0.3');
    assert.match(legacy.body.url, /\/a2a\/carded\/jsonrpc$/);
  });

  test('without a valid key a card is 401, unless its agent made it public and it is fetched by id', async () => {
    const agent = await createAgent(ctx, { name: 'private-card', model: { provider: 'fake' } });
    for (const ref of ['private-card', agent.id]) {
      const res = await ctx().http.get(`/a2a/${ref}/.well-known/agent-card.json`);
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    }
    const bad = await ctx().http.get('/a2a/private-card/.well-known/agent-card.json').set('Authorization', 'Bearer palai_sk_nope');
    assert.equal(bad.status, 401);
    const other = await ctx()
      .http.get('/a2a/private-card/.well-known/agent-card.json')
      .set('Authorization', `Bearer ${await ctx().newProjectKey()}`);
    assert.equal(other.status, 404, 'another project has no such agent');

    const open = await createAgent(ctx, { name: 'public-card', model: { provider: 'fake' }, metadata: { a2a_card: 'public' } });
    const res = await ctx().http.get(`/a2a/${open.id}/.well-known/agent-card.json`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'public-card');
    assert.equal((await ctx().http.get('/a2a/public-card/.well-known/agent-card.json')).status, 401, 'by name a card needs the key');
    assert.equal(
      (await ctx().http.get('/a2a/agt_00000000000000000000000000/.well-known/agent-card.json')).status,
      401,
      'an unknown id looks like a private one',
    );
    const call = await ctx()
      .http.post(`/a2a/${open.id}/jsonrpc`)
      .send({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'resp_x' } });
    assert.equal(call.status, 401, 'a public card opens no method');
  });

  test("GET /a2a/ lists the project's cards, paged", async () => {
    const res = await ctx().http.get('/a2a/').query({ limit: 1 }).set(ctx().auth);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.cards.length, 1);
    assert.ok(res.body.next_page_token);
    const all = await ctx().http.get('/a2a/').query({ limit: 100 }).set(ctx().auth);
    const names = all.body.cards.map((c: { name: string }) => c.name);
    assert.ok(names.includes('carded') && names.includes('public-card'), names.join());
    const card = all.body.cards.find((c: { name: string }) => c.name === 'carded');
    assert.match(card.supportedInterfaces[0].url, /\/a2a\/carded\/jsonrpc$/);
    assert.equal((await ctx().http.get('/a2a/')).status, 401);
    assert.equal((await ctx().http.get('/a2a/').query({ limit: 0 }).set(ctx().auth)).status, 400);
  });
});
