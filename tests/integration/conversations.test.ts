// OpenAI's Conversations API over Palai sessions, through the official SDK: a
// conversation is a session, its items what every later response reads, and
// `conversation` on a response is `session_id`. (The fake model counts the
// words it was shown as input tokens, which shows what the model saw.)
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

await describeEachStore('conversations', (ctx) => {
  let server: Server;
  let client: OpenAI;

  before(async () => {
    server = ctx().hub.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    client = new OpenAI({ apiKey: ctx().apiKey, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
    await createAgent(ctx, { name: 'conv-echo', model: { provider: 'fake' } });
    await createAgent(ctx, { name: 'conv-other', model: { provider: 'fake' } });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('create, retrieve, update and delete a conversation', async () => {
    const created = await client.conversations.create({ metadata: { topic: 'colours' } });
    assert.match(created.id, /^ses_/);
    assert.equal(created.object, 'conversation');
    assert.deepEqual(created.metadata, { topic: 'colours' });
    assert.deepEqual(await client.conversations.retrieve(created.id), created);
    const updated = await client.conversations.update(created.id, { metadata: { topic: 'shapes' } });
    assert.deepEqual(updated.metadata, { topic: 'shapes' });
    const session = await ctx().http.get(`/v1/sessions/${created.id}`).set(ctx().auth);
    assert.equal(session.body.agent, null, 'no agent until its first response');
    const deleted = await client.conversations.delete(created.id);
    assert.deepEqual(deleted, { id: created.id, object: 'conversation.deleted', deleted: true });
    await assert.rejects(client.conversations.retrieve(created.id), OpenAI.NotFoundError);
  });

  test('items: the initial ones, added ones, one retrieved, one deleted; listed newest first by default', async () => {
    const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'first' }] });
    const added = await client.conversations.items.create(conversation.id, {
      items: [
        { type: 'message', role: 'user', content: 'second' },
        { type: 'message', role: 'assistant', content: 'third' },
      ],
    });
    assert.equal(added.data.length, 2);
    const text = (item: unknown) => (item as { content: { text: string }[] }).content[0].text;
    const listed = await client.conversations.items.list(conversation.id);
    assert.deepEqual(listed.data.map(text), ['third', 'second', 'first']);
    const ascending = [];
    for await (const item of client.conversations.items.list(conversation.id, { order: 'asc', limit: 1 })) ascending.push(text(item));
    assert.deepEqual(ascending, ['first', 'second', 'third']);
    const one = await client.conversations.items.retrieve(added.data[0].id!, { conversation_id: conversation.id });
    assert.equal(text(one), 'second');
    const after = await client.conversations.items.delete(added.data[0].id!, { conversation_id: conversation.id });
    assert.equal(after.id, conversation.id);
    assert.deepEqual((await client.conversations.items.list(conversation.id, { order: 'asc' })).data.map(text), ['first', 'third']);
    await assert.rejects(client.conversations.items.retrieve(added.data[0].id!, { conversation_id: conversation.id }), OpenAI.NotFoundError);
  });

  test('responses in a conversation read its items, bind it to their agent, and add to it', async () => {
    const conversation = await client.conversations.create({ items: [{ type: 'message', role: 'user', content: 'one two three four' }] });
    const first = await client.responses.create({ model: 'conv-echo', conversation: conversation.id, input: 'five' });
    assert.equal(first.output_text, 'five');
    assert.equal((first as unknown as { conversation: { id: string } }).conversation.id, conversation.id);
    assert.equal(first.usage!.input_tokens, 5, 'the model saw the conversation item and the input');
    const session = await ctx().http.get(`/v1/sessions/${conversation.id}`).set(ctx().auth);
    assert.equal(session.body.agent, 'conv-echo', 'the first response bound the conversation to its agent');
    await client.conversations.items.create(conversation.id, { items: [{ type: 'message', role: 'user', content: 'six seven' }] });
    const second = await client.responses.create({ model: 'conv-echo', conversation: { id: conversation.id }, input: 'eight' });
    assert.equal(second.usage!.input_tokens, 4 + 1 + 1 + 2 + 1, 'the first item, the first input and its answer, the added item, the input');
    const texts = (await client.conversations.items.list(conversation.id, { order: 'asc', limit: 100 })).data.map(
      (item) => (item as { content: { text: string }[] }).content[0].text,
    );
    assert.deepEqual(texts, ['one two three four', 'five', 'five', 'six seven', 'eight', 'eight']);
    const otherAgent = await ctx().http.post('/v1/responses').set(ctx().auth).send({ model: 'conv-other', conversation: conversation.id, input: 'x' });
    assertProblem(otherAgent, 400, 'invalid-request');
  });

  test('bad input: an unknown conversation, two different sessions named, a first response without a model', async () => {
    await assert.rejects(client.responses.create({ model: 'conv-echo', conversation: 'ses_nope', input: 'x' }), OpenAI.NotFoundError);
    const conversation = await client.conversations.create({});
    const both = await ctx()
      .http.post('/v1/responses')
      .set(ctx().auth)
      .send({ model: 'conv-echo', conversation: conversation.id, session_id: 'ses_other', input: 'x' });
    assertProblem(both, 400, 'invalid-request');
    assert.equal(both.body.errors[0].pointer, '/conversation');
    const unbound = await ctx().http.post('/v1/responses').set(ctx().auth).send({ session_id: conversation.id, input: 'x' });
    assertProblem(unbound, 400, 'invalid-request');
    assert.equal(unbound.body.errors[0].pointer, '/model');
    assertProblem(await ctx().http.get(`/v1/conversations/${conversation.id}/items?after=msg_not_here`).set(ctx().auth), 400, 'validation-failed');
    const tooMany = await ctx().http.post(`/v1/conversations/${conversation.id}/items`).set(ctx().auth).send({ items: [] });
    assertProblem(tooMany, 400, 'validation-failed');
  });

  test('the same Idempotency-Key adds the items once', async () => {
    const conversation = await client.conversations.create({});
    const body = { items: [{ type: 'message' as const, role: 'user' as const, content: 'only once' }] };
    const first = await client.conversations.items.create(conversation.id, body, { headers: { 'Idempotency-Key': 'conv-items-1' } });
    const again = await client.conversations.items.create(conversation.id, body, { headers: { 'Idempotency-Key': 'conv-items-1' } });
    assert.deepEqual(
      again.data.map((i) => i.id),
      first.data.map((i) => i.id),
    );
    assert.equal((await client.conversations.items.list(conversation.id)).data.length, 1);
  });

  test('every answer matches the document', async () => {
    const { http, auth } = ctx();
    const created = await http
      .post('/v1/conversations')
      .set(auth)
      .send({ metadata: { a: 'b' }, items: [{ role: 'user', content: 'hi' }] });
    assertMatchesSpec(created, 'createConversation');
    const id = created.body.id;
    assertMatchesSpec(await http.get(`/v1/conversations/${id}`).set(auth), 'getConversation');
    assertMatchesSpec(await http.post(`/v1/conversations/${id}`).set(auth).send({ metadata: {} }), 'updateConversation');
    const items = await http.get(`/v1/conversations/${id}/items`).set(auth);
    assertMatchesSpec(items, 'listConversationItems');
    const added = await http
      .post(`/v1/conversations/${id}/items`)
      .set(auth)
      .send({ items: [{ role: 'user', content: 'more' }] });
    assertMatchesSpec(added, 'createConversationItems');
    assertMatchesSpec(await http.get(`/v1/conversations/${id}/items/${items.body.data[0].id}`).set(auth), 'getConversationItem');
    assertMatchesSpec(await http.delete(`/v1/conversations/${id}/items/${items.body.data[0].id}`).set(auth), 'deleteConversationItem');
    assertMatchesSpec(await http.delete(`/v1/conversations/${id}`).set(auth), 'deleteConversation');
    assertMatchesSpec(await http.get(`/v1/conversations/${id}`).set(auth), 'getConversation');
  });
});
