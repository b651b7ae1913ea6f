// POST /v1/chat/completions through the official OpenAI SDK: an agent answers a
// chat, plain and streamed, as a durable Palai response, with the caller's
// tools and a JSON schema; what the endpoint cannot carry is a 400 naming the
// field, and nothing is written.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import OpenAI from 'openai';
import type { RunnableToolFunctionWithParse } from 'openai/lib/RunnableFunction';
import { matchesSchema } from '../../adapters/http/validation.js';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { openAiClientFor } from '../support/openai-client.js';
import { assertMatchesSpec } from '../support/spec.js';

await describeEachStore('chat completions', (ctx) => {
  const sdk = openAiClientFor(ctx);
  let client: OpenAI;
  const responseCount = async () =>
    (await ctx().hub.kernel.db.query<{ n: number }>('SELECT count(*)::integer AS n FROM responses WHERE project_id = $1', [ctx().projectId])).rows[0].n;

  before(async () => {
    client = sdk();
    await createAgent(ctx, { name: 'chat-echo', model: { provider: 'fake' } });
    await createAgent(ctx, { name: 'chat-broken', model: { provider: 'fake', script: [{ error: { status: 400, message: 'the provider refused' } }] } });
    await createAgent(ctx, {
      name: 'chat-client-tool',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: {} }] }, { text: 'found: 42' }] },
      tools: [{ type: 'function', name: 'lookup' }],
    });
  });

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
    assert.deepEqual(
      items.data.map((item) => (item as { role?: string }).role),
      ['user', 'assistant', 'user'],
    );
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
    assert.deepEqual(
      finish.map((c) => c.choices[0].finish_reason),
      ['stop'],
    );
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
    const plain = await ctx()
      .http.post('/v1/chat/completions')
      .set(ctx().auth)
      .send({ model: 'chat-echo', messages: [{ role: 'user', content: 'x' }] });
    assertMatchesSpec(plain, 'createChatCompletion');
    const streamed = await ctx()
      .http.post('/v1/chat/completions')
      .set(ctx().auth)
      .send({ model: 'chat-echo', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'a b c' }] });
    const frames = streamed.text
      .split('\n\n')
      .filter((f) => f.startsWith('data: '))
      .map((f) => f.slice(6));
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

  test('what this endpoint cannot carry is a 400 naming the field, and nothing is written', async () => {
    const before = await responseCount();
    const refused = async (extra: Record<string, unknown>, param: string) => {
      const request = {
        model: 'chat-echo',
        messages: [{ role: 'user', content: 'x' }],
        ...extra,
      } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
      await assert.rejects(client.chat.completions.create(request), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.ok(String(error.param).startsWith(param), `${error.param} names ${param}`);
        return true;
      });
    };
    await refused({ tools: [{ type: 'custom', custom: { name: 'f' } }] }, 'tools[0]');
    await refused({ response_format: { type: 'json_schema' } }, 'response_format');
    await refused({ n: 2 }, 'n');
    await refused(
      {
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', content: 'y' },
        ],
      },
      'messages[1].tool_call_id',
    );
    await refused({ messages: [{ role: 'system', content: 'only instructions' }] }, 'messages');
    await refused({ tool_choice: { type: 'function', function: { name: 'not_offered' } } }, 'tool_choice.name');
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

  test("a run that calls the agent's client function ends the chat with tool_calls; the tool message resumes the same response", async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'look it up' }];
    const first = await client.chat.completions.create({ model: 'chat-client-tool', messages });
    const [choice] = first.choices;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    const [call] = choice.message.tool_calls ?? [];
    assert.ok(call && call.type === 'function', JSON.stringify(choice.message));
    assert.equal(call.function.name, 'lookup');
    const count = await responseCount();
    const second = await client.chat.completions.create({
      model: 'chat-client-tool',
      messages: [...messages, choice.message, { role: 'tool', tool_call_id: call.id, content: 'the answer is 42' }],
    });
    assert.equal(second.id, first.id, 'the waiting response resumed');
    assert.equal(second.choices[0].finish_reason, 'stop');
    assert.equal(second.choices[0].message.content, 'found: 42');
    assert.equal(await responseCount(), count, 'no new response');
    assert.ok(second.usage!.total_tokens > 0 && second.usage!.total_tokens < first.usage!.total_tokens + second.usage!.total_tokens);
    const state = (await ctx().http.get(`/v1/responses/${first.id}`).set(ctx().auth)).body;
    assert.equal(state.palai_status, 'completed');
    assert.equal(state.output.find((item: { type: string }) => item.type === 'function_call_output').output, 'the answer is 42');
  });

  test("a request's tools are this run's functions: the SDK's runTools loop calls them and gets the final answer, streamed too", async () => {
    await createAgent(ctx, {
      name: 'chat-plain',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'the sum is 5' }] },
    });
    const seen: unknown[] = [];
    const add = (args: { a: number; b: number }) => {
      seen.push(args);
      return String(args.a + args.b);
    };
    const parse = (text: string) => JSON.parse(text) as { a: number; b: number };
    const tools: RunnableToolFunctionWithParse<{ a: number; b: number }>[] = [
      {
        type: 'function',
        function: {
          name: 'add',
          description: 'Adds two numbers.',
          function: add,
          parse,
          parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
        },
      },
    ];
    const runner = client.chat.completions.runTools({ model: 'chat-plain', messages: [{ role: 'user', content: 'add 2 and 3' }], tools });
    assert.equal(await runner.finalContent(), 'the sum is 5');
    assert.deepEqual(seen, [{ a: 2, b: 3 }]);
    const streamed = client.chat.completions.runTools({
      model: 'chat-plain',
      messages: [{ role: 'user', content: 'add 2 and 3' }],
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.equal(await streamed.finalContent(), 'the sum is 5');
    assert.equal(seen.length, 2);
  });

  test('a tool message answering only some of the calls is a 400 naming the rest', async () => {
    await createAgent(ctx, {
      name: 'chat-two-calls',
      model: {
        provider: 'fake',
        script: [
          {
            tool_calls: [
              { name: 'lookup', arguments: { q: 1 } },
              { name: 'lookup', arguments: { q: 2 } },
            ],
          },
          { text: 'both' },
        ],
      },
      tools: [{ type: 'function', name: 'lookup' }],
    });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'two' }];
    const first = await client.chat.completions.create({ model: 'chat-two-calls', messages });
    const [a, b] = first.choices[0].message.tool_calls!;
    await assert.rejects(
      client.chat.completions.create({
        model: 'chat-two-calls',
        messages: [...messages, first.choices[0].message, { role: 'tool', tool_call_id: a.id, content: 'one' }],
      }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.message.includes(b.id),
    );
    const done = await client.chat.completions.create({
      model: 'chat-two-calls',
      messages: [
        ...messages,
        first.choices[0].message,
        { role: 'tool', tool_call_id: a.id, content: 'one' },
        { role: 'tool', tool_call_id: b.id, content: 'two' },
      ],
    });
    assert.equal(done.choices[0].message.content, 'both');
  });

  test('response_format json_schema is the output contract; temperature, top_p, max_tokens and user apply to the run', async () => {
    await createAgent(ctx, { name: 'chat-json', model: { provider: 'fake', script: [{ json: { city: 'Oslo' } }] } });
    const response_format = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'city',
        strict: true,
        schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      },
    };
    const parsed = await client.chat.completions.parse({
      model: 'chat-json',
      messages: [{ role: 'user', content: 'city?' }],
      response_format,
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 99,
      user: 'u-1',
    });
    assert.deepEqual(JSON.parse(parsed.choices[0].message.content!), { city: 'Oslo' });
    const run = (await ctx().http.get(`/v1/responses/${parsed.id}`).set(ctx().auth)).body;
    assert.deepEqual(run.text.format.schema, response_format.json_schema.schema);
    assert.deepEqual([run.temperature, run.top_p, run.max_output_tokens, run.user], [0.2, 0.9, 99, 'u-1']);
    await createAgent(ctx, { name: 'chat-json-bad', model: { provider: 'fake', script: [{ text: 'prose' }, { text: 'more prose' }] } });
    await assert.rejects(
      client.chat.completions.create({ model: 'chat-json-bad', messages: [{ role: 'user', content: 'x' }], response_format }),
      (error: unknown) => {
        assert.ok(error instanceof OpenAI.APIError, String(error));
        assert.equal(error.code, 'output-invalid');
        return true;
      },
    );
  });

  test('a run waiting for a decision is a 409 naming the response to answer', async () => {
    await createAgent(ctx, {
      name: 'chat-gated',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'x' } }] }] },
      tools: [{ type: 'builtin', name: 'echo' }],
      approval: { tools: ['echo'] },
    });
    const res = await ctx()
      .http.post('/v1/chat/completions')
      .set(ctx().auth)
      .send({ model: 'chat-gated', messages: [{ role: 'user', content: 'x' }] });
    assertMatchesSpec(res, 'createChatCompletion');
    assert.equal(res.status, 409);
    assert.equal(res.body.error.code, 'invalid-state');
    assert.match(res.body.response_id, /^resp_/);
    assert.equal((await ctx().http.get(`/v1/responses/${res.body.response_id}`).set(ctx().auth)).body.palai_status, 'waiting_for_approval');
  });
});
