// OpenAI's item_reference input items: an item Palai returned before, named by its id. Clients that resend
// a whole history (the AI SDK's Responses provider) send earlier turns this way; the run sees the item itself.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import OpenAI from 'openai';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { openAiClientFor } from '../support/openai-client.js';
import { assertProblem } from '../support/spec.js';

type InputItems = OpenAI.Responses.ResponseInputItem[];

await describeEachStore('item references in a request input', (ctx) => {
  const sdk = openAiClientFor(ctx);
  let client: OpenAI;

  before(async () => {
    client = sdk();
    await createAgent(ctx, { name: 'refs-echo', model: { provider: 'fake' } });
    await createAgent(ctx, {
      name: 'refs-tool',
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'lookup', arguments: {} }] }] },
    });
  });

  const inputItems = async (id: string) => (await client.responses.inputItems.list(id, { order: 'asc' })).data;

  test('a reference, with or without its type, is the stored output item: the run gets a copy under a new id', async () => {
    const first = await client.responses.create({ model: 'refs-echo', input: 'the first answer' });
    const message = first.output.find((item) => item.type === 'message')!;
    for (const reference of [{ type: 'item_reference', id: message.id }, { id: message.id }]) {
      const input = [{ role: 'user', content: 'the first answer' }, reference, { role: 'user', content: 'and the second' }] as InputItems;
      const second = await client.responses.create({ model: 'refs-echo', input });
      assert.equal(second.status, 'completed');
      assert.equal(second.output_text, 'and the second');
      const items = await inputItems(second.id);
      assert.deepEqual(
        items.map((item) => (item.type === 'message' ? [item.role, item.content.map((part) => ('text' in part ? part.text : '')).join('')] : [item.type])),
        [
          ['user', 'the first answer'],
          ['assistant', 'the first answer'],
          ['user', 'and the second'],
        ],
      );
      assert.notEqual(items[1].id, message.id, 'a copy, not the stored item itself');
    }
  });

  test('a reference to a function call is that call', async () => {
    const waiting = await client.responses.create({ model: 'refs-tool', input: 'look it up' });
    const call = waiting.output.find((item) => item.type === 'function_call')!;
    const later = await client.responses.create({
      model: 'refs-echo',
      input: [
        { role: 'user', content: 'look it up' },
        { type: 'item_reference', id: call.id! },
        { type: 'function_call_output', call_id: call.call_id, output: 'found' },
        { role: 'user', content: 'thanks' },
      ],
    });
    const items = await inputItems(later.id);
    const copied = items.find((item) => item.type === 'function_call');
    assert.ok(copied && copied.type === 'function_call');
    assert.equal(copied.call_id, call.call_id);
    assert.equal(copied.name, 'lookup');
  });

  test("a call Palai ran, sent back as its mcp_call or referred to by the mcp_call's id, is the call and its output", async () => {
    await createAgent(ctx, {
      name: 'refs-ran',
      tools: [{ type: 'builtin', name: 'echo' }],
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'echo', arguments: { text: 'ping' } }] }, { text: 'pinged' }] },
    });
    const ran = await client.responses.create({ model: 'refs-ran', input: 'ping' });
    const mcpCall = ran.output.find((item) => item.type === 'mcp_call')!;
    assert.equal(mcpCall.output, 'ping');
    for (const sent of [{ type: 'item_reference', id: mcpCall.id }, mcpCall]) {
      const later = await client.responses.create({
        model: 'refs-echo',
        input: [{ role: 'user', content: 'ping' }, sent, { role: 'user', content: 'next' }] as InputItems,
      });
      const items = await inputItems(later.id);
      assert.deepEqual(
        items.map((item) => item.type),
        ['message', 'function_call', 'function_call_output', 'message'],
      );
      const [call, output] = items.slice(1, 3) as [OpenAI.Responses.ResponseFunctionToolCallItem, OpenAI.Responses.ResponseFunctionToolCallOutputItem];
      assert.equal(call.name, 'echo');
      assert.equal(output.call_id, call.call_id);
      assert.equal(output.output, 'ping');
    }
  });

  test("an id the project has no item for, or another project's item, is a 400 naming the reference; nothing is admitted", async () => {
    const { http, auth } = ctx();
    const own = await client.responses.create({ model: 'refs-echo', input: 'mine' });
    const before = (await http.get('/v1/responses?limit=100').set(auth)).body.data.length;
    const bad = await http
      .post('/v1/responses')
      .set(auth)
      .send({
        model: 'refs-echo',
        input: [
          { role: 'user', content: 'hi' },
          { type: 'item_reference', id: 'msg_nothing_like_it' },
        ],
      });
    assertProblem(bad, 400, 'validation-failed');
    assert.equal(bad.body.errors[0].pointer, '/input/1/id');

    const otherAuth = { Authorization: `Bearer ${await ctx().newProjectKey()}` };
    await createAgent(ctx, { name: 'refs-echo', model: { provider: 'fake' } }, otherAuth);
    const other = await http
      .post('/v1/responses')
      .set(otherAuth)
      .send({ model: 'refs-echo', input: [{ type: 'item_reference', id: own.output[0].id }] });
    assertProblem(other, 400, 'validation-failed');
    assert.equal(other.body.errors[0].pointer, '/input/0/id');
    assert.equal((await http.get('/v1/responses?limit=100').set(auth)).body.data.length, before);
  });

  test('a reference carrying anything but its id and type is refused by the schema', async () => {
    const { http, auth } = ctx();
    const res = await http
      .post('/v1/responses')
      .set(auth)
      .send({ model: 'refs-echo', input: [{ type: 'item_reference', id: 'msg_x', content: 'smuggled' }] });
    assertProblem(res, 400, 'validation-failed');
  });
});
