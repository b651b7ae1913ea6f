// POST /v1/chat/completions through the official OpenAI SDK: an agent answers a
// chat, plain and streamed, as a durable Palai response; what the endpoint
// cannot carry yet is a 400 naming the field, and nothing is written.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { matchesSchema } from '../../adapters/http/validation.js';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec } from '../support/spec.js';

await describeEachStore('chat completions', (ctx) => {
  let server: Server;
  let client: OpenAI;
  const responseCount = async () => (await ctx().hub.kernel.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM responses WHERE project_id = $1', [ctx().projectId])).rows[0].n;

  before(async () => {
    server = ctx().hub.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    client = new OpenAI({ apiKey: ctx().apiKey, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
    await createAgent(ctx, { name: 'chat-echo', model: { provider: 'fake' } });
    await createAgent(ctx, { name: 'chat-broken', model: { provider: 'fake', script: [{ error: { status: 400, message: 'the provider refused' } }] } });
    await createAgent(ctx, {
      name: 'chat-client-tool',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: {} }] }] },
      tools: [{ type: 'function', name: 'lookup' }],
    });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a chat is answered by the agent as a durable response; system messages join its instructions', async () => {
    const completion = await client.chat.completions.create({
      model: 'chat-echo',
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: [{ type: 'text', text: 'second question' }] },
      ],
    });
    assert.equal(completion.object, 'chat.completion');
    assert.equal(completion.model, 'chat-echo');
    assert.equal(completion.choices[0].message.role, 'assistant');
    assert.equal(completion.choices[0].message.content, 'second question');
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.ok(completion.usage!.total_tokens > 0);
    const response = await ctx().http.get(`/v1/responses/${completion.id}`).set(ctx().auth);
    assert.equal(response.body.status, 'completed', 'the completion is a Palai response, readable under /v1/responses');
    assert.equal(response.body.instructions, 'Answer briefly.');
    const items = await client.responses.inputItems.list(completion.id, { order: 'asc' });
    assert.deepEqual(items.data.map((item) => (item as { role?: string }).role), ['user', 'assistant', 'user']);
  });

  test('streamed: the role, the text as deltas, the finish reason, the usage, then [DONE]', async () => {
    const stream = await client.chat.completions.create({
      model: 'chat-echo',
      messages: [{ role: 'user', content: 'stream these words please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks[0].choices[0].delta.role, 'assistant');
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'stream these words please');
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    assert.deepEqual(finish.map((c) => c.choices[0].finish_reason), ['stop']);
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.ok(last.usage!.completion_tokens > 0);
    assert.ok(chunks.every((c) => c.id === chunks[0].id && c.id.startsWith('resp_')));
  });

  test("the SDK's stream helper accumulates the final message", async () => {
    const runner = client.chat.completions.stream({ model: 'chat-echo', messages: [{ role: 'user', content: 'helper words' }] });
    assert.equal(await runner.finalContent(), 'helper words');
  });

  test('the wire matches the document: every chunk a ChatCompletionChunk, the body a ChatCompletion', async () => {
    const plain = await ctx().http.post('/v1/chat/completions').set(ctx().auth).send({ model: 'chat-echo', messages: [{ role: 'user', content: 'x' }] });
    assertMatchesSpec(plain, 'createChatCompletion');
    const streamed = await ctx().http.post('/v1/chat/completions').set(ctx().auth).send({ model: 'chat-echo', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'a b c' }] });
    const frames = streamed.text.split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice(6));
    assert.equal(frames.at(-1), '[DONE]');
    for (const frame of frames.slice(0, -1)) {
      const check = matchesSchema('ChatCompletionChunk', JSON.parse(frame));
      assert.ok(check.ok, `${frame}: ${JSON.stringify(check.errors)}`);
    }
  });

  test('the same Idempotency-Key answers with the same response, run once', async () => {
    const body = { model: 'chat-echo', messages: [{ role: 'user' as const, content: 'once only' }] };
    const first = await client.chat.completions.create(body, { headers: { 'Idempotency-Key': 'chat-key-1' } });
    const before = await responseCount();
    const again = await client.chat.completions.create(body, { headers: { 'Idempotency-Key': 'chat-key-1' } });
    assert.equal(again.id, first.id);
    assert.equal(await responseCount(), before);
  });

  test('what this endpoint cannot carry yet is a 400 naming the field, and nothing is written', async () => {
    const before = await responseCount();
    const refused = async (extra: Record<string, unknown>, param: string) => {
      const request = { model: 'chat-echo', messages: [{ role: 'user', content: 'x' }], ...extra } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
      await assert.rejects(client.chat.completions.create(request), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.param, param);
        return true;
      });
    };
    await refused({ tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] }, 'tools');
    await refused({ response_format: { type: 'json_object' } }, 'response_format');
    await refused({ n: 2 }, 'n');
    await refused({ messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'c', content: 'y' }] }, 'messages[1]');
    await refused({ messages: [{ role: 'system', content: 'only instructions' }] }, 'messages');
    await assert.rejects(client.chat.completions.create({ model: 'no-such-agent', messages: [{ role: 'user', content: 'x' }] }), OpenAI.NotFoundError);
    assert.equal(await responseCount(), before);
  });

  test('a run that fails is an error naming the response, plain and streamed', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'chat-broken', messages: [{ role: 'user', content: 'x' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.status, 502);
      assert.equal(error.code, 'model-provider-error');
      assert.match(error.message, /the provider refused/);
      return true;
    });
    const stream = await client.chat.completions.create({ model: 'chat-broken', messages: [{ role: 'user', content: 'x' }], stream: true });
    await assert.rejects(
      (async () => {
        for await (const _ of stream);
      })(),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError, String(error));
        assert.equal(error.code, 'model-provider-error');
        return true;
      },
    );
  });

  test('a run that waits for a client tool is a 409 naming the response to continue', async () => {
    const res = await ctx().http.post('/v1/chat/completions').set(ctx().auth).send({ model: 'chat-client-tool', messages: [{ role: 'user', content: 'x' }] });
    assertMatchesSpec(res, 'createChatCompletion');
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'invalid-state');
    assert.match(res.body.response_id, /^resp_/);
    assert.equal((await ctx().http.get(`/v1/responses/${res.body.response_id}`).set(ctx().auth)).body.status, 'waiting_for_tool');
  });
});
