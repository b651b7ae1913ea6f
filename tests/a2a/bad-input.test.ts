// Bad A2A input is an answer, not a crash: each case gets its A2A error (on the
// JSON-RPC wire: the code; on HTTP+JSON: the status and reason), and nothing is
// created — no response, no session.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

const message = (parts: unknown[], extra: Record<string, unknown> = {}) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts, ...extra });

await describeEachStore('A2A bad input', (ctx) => {
  before(async () => {
    await createAgent(ctx, { name: 'strict', model: { provider: 'fake' } });
  });

  const rpc = async (body: unknown, headers: Record<string, string> = {}) => {
    const req = ctx().http.post('/a2a/strict/jsonrpc').set(ctx().auth).set('A2A-Version', '1.0').set(headers);
    const res = typeof body === 'string' ? await req.set('content-type', 'application/json').send(body) : await req.send(body as object);
    return res;
  };
  const call = (method: string, params: unknown) => rpc({ jsonrpc: '2.0', id: 7, method, params });
  const counts = async () => {
    const responses = await ctx().http.get('/v1/responses?agent=strict&limit=100').set(ctx().auth);
    const sessions = await ctx().http.get('/v1/sessions?limit=100').set(ctx().auth);
    return { responses: responses.body.data.length, sessions: sessions.status === 200 ? sessions.body.data.length : -1 };
  };
  const finished = async () => {
    const res = await call('SendMessage', { message: message([{ text: 'done soon' }]) });
    assert.equal(res.body.result.task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(res.body));
    return res.body.result.task;
  };

  test('malformed JSON is a parse error (-32700); an unknown method is -32601', async () => {
    const parse = await rpc('{"jsonrpc": "2.0", "method": ');
    assert.equal(parse.body.error.code, -32700);
    assert.equal(parse.body.id, null);
    const unknown = await call('tasks/explode', {});
    assert.equal(unknown.body.error.code, -32601);
    assert.equal(unknown.body.id, 7);
  });

  test('an unknown task is TaskNotFound (-32001; HTTP+JSON 404), also one of another agent', async () => {
    const res = await call('GetTask', { id: 'resp_00000000000000000000000000' });
    assert.equal(res.body.error.code, -32001);
    const rest = await ctx().http.get('/a2a/strict/rest/tasks/resp_00000000000000000000000000').set(ctx().auth).set('A2A-Version', '1.0');
    assert.equal(rest.status, 404);
    assert.equal(rest.body.error.details[0].reason, 'TASK_NOT_FOUND');
    await createAgent(ctx, { name: 'other', model: { provider: 'fake' } });
    const task = await finished();
    const foreign = await ctx()
      .http.post('/a2a/other/jsonrpc')
      .set(ctx().auth)
      .set('A2A-Version', '1.0')
      .send({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: task.id } });
    assert.equal(foreign.body.error.code, -32001);
  });

  test('a message to a finished task is UnsupportedOperation (-32004), and starts nothing', async () => {
    const task = await finished();
    const before = await counts();
    const res = await call('SendMessage', { message: message([{ text: 'more' }], { taskId: task.id }) });
    assert.equal(res.body.error.code, -32004, JSON.stringify(res.body));
    assert.deepEqual(await counts(), before);
  });

  test("a contextId that is not the task's is InvalidParams (-32602); an unknown context too; nothing is created", async () => {
    await createAgent(ctx, {
      name: 'strict-asker',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Sure?' } }] }, { text: 'ok' }] },
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
    const asked = await ctx()
      .http.post('/a2a/strict-asker/jsonrpc')
      .set(ctx().auth)
      .set('A2A-Version', '1.0')
      .send({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: message([{ text: 'go' }]) } });
    const waiting = asked.body.result.task;
    assert.equal(waiting.status.state, 'TASK_STATE_INPUT_REQUIRED');
    const other = await finished();
    const before = await counts();
    const wrong = await ctx()
      .http.post('/a2a/strict-asker/jsonrpc')
      .set(ctx().auth)
      .set('A2A-Version', '1.0')
      .send({
        jsonrpc: '2.0',
        id: 2,
        method: 'SendMessage',
        params: { message: message([{ text: 'yes' }], { taskId: waiting.id, contextId: other.contextId }) },
      });
    assert.equal(wrong.body.error.code, -32602, JSON.stringify(wrong.body));
    const unknown = await call('SendMessage', { message: message([{ text: 'x' }], { contextId: 'ses_00000000000000000000000000' }) });
    assert.equal(unknown.body.error.code, -32602);
    assert.deepEqual(await counts(), before);
    const state = await ctx()
      .http.post('/a2a/strict-asker/jsonrpc')
      .set(ctx().auth)
      .set('A2A-Version', '1.0')
      .send({ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: waiting.id } });
    assert.equal(state.body.result.metadata.palai_status, 'waiting_for_input', 'the waiting task was not answered');
  });

  test('oversized parts and files are refused before anything is stored', async () => {
    const before = await counts();
    const big = await call('SendMessage', { message: message([{ text: 'x'.repeat(1_048_577) }]) });
    assert.equal(big.body.error.code, -32602, JSON.stringify(big.body).slice(0, 300));
    const many = await call('SendMessage', { message: message(Array.from({ length: 101 }, () => ({ text: 'x' }))) });
    assert.equal(many.body.error.code, -32602);
    const file = await call('SendMessage', { message: message([{ url: 'https://example.com/a.pdf', mediaType: 'application/pdf' }]) });
    assert.equal(file.body.error.code, -32005);
    const nul = await call('SendMessage', { message: message([{ text: 'a\u0000b' }]) });
    assert.equal(nul.body.error.code, -32602);
    const noId = await call('SendMessage', { message: { role: 'ROLE_USER', parts: [{ text: 'x' }] } });
    assert.ok(noId.body.error, 'a message without messageId is refused');
    const rest = await ctx()
      .http.post('/a2a/strict/rest/message:send')
      .set(ctx().auth)
      .set('A2A-Version', '1.0')
      .send({ message: message([{ text: 'x'.repeat(1_048_577) }]) });
    assert.equal(rest.status, 400);
    assert.deepEqual(await counts(), before);
  });

  test('text no store can hold in a task id, a contextId, a list query or a REST path is InvalidParams (-32602; HTTP+JSON 400), and creates nothing', async () => {
    const before = await counts();
    for (const bad of ['resp_\u0000', 'ctx \ud800 half']) {
      const get = await call('GetTask', { id: bad });
      assert.equal(get.body.error?.code, -32602, JSON.stringify(get.body));
      const cancel = await call('CancelTask', { id: bad });
      assert.equal(cancel.body.error?.code, -32602, JSON.stringify(cancel.body));
      const send = await call('SendMessage', { message: message([{ text: 'hi' }], { contextId: bad }) });
      assert.equal(send.body.error?.code, -32602, JSON.stringify(send.body));
      const list = await call('ListTasks', { contextId: bad });
      assert.equal(list.body.error?.code, -32602, JSON.stringify(list.body));
    }
    const path = await ctx().http.get('/a2a/strict/rest/tasks/resp_%00x').set(ctx().auth).set('A2A-Version', '1.0');
    assert.equal(path.status, 400, path.text);
    const query = await ctx().http.get('/a2a/strict/rest/tasks?contextId=%00').set(ctx().auth).set('A2A-Version', '1.0');
    assert.equal(query.status, 400, query.text);
    assert.deepEqual(await counts(), before);
  });

  test('a body over the hub limit is refused with 413 on both bindings', async () => {
    const huge = 'x'.repeat(ctx().hub.api.config.maxBodyBytes + 10);
    const res = await call('SendMessage', { message: message([{ text: huge }]) });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, -32600);
    const rest = await ctx()
      .http.post('/a2a/strict/rest/message:send')
      .set(ctx().auth)
      .send({ message: message([{ text: huge }]) });
    assert.equal(rest.status, 413);
  });

  test('a messageId reused for a different message is a message of its own; resent as it was, the first task', async () => {
    const m = message([{ text: 'first' }]);
    const first = await call('SendMessage', { message: m });
    assert.ok(first.body.result, JSON.stringify(first.body));
    const second = await call('SendMessage', { message: { ...m, parts: [{ text: 'second' }] } });
    assert.ok(second.body.result, JSON.stringify(second.body));
    assert.notEqual(second.body.result.task.id, first.body.result.task.id);
    const again = await call('SendMessage', { message: m });
    assert.equal(again.body.result.task.id, first.body.result.task.id);
  });

  test('no key or a bad key is 401 on every binding; an unknown agent is 404', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'resp_x' } };
    const none = await ctx().http.post('/a2a/strict/jsonrpc').send(body);
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    const bad = await ctx().http.post('/a2a/strict/jsonrpc').set('Authorization', 'Bearer palai_sk_wrong').send(body);
    assert.equal(bad.status, 401);
    const rest = await ctx().http.get('/a2a/strict/rest/tasks/resp_x');
    assert.equal(rest.status, 401);
    assert.equal(rest.body.error.status, 'UNAUTHENTICATED');
    const missing = await ctx().http.post('/a2a/nobody/jsonrpc').set(ctx().auth).send(body);
    assert.equal(missing.status, 404);
  });

  test('a push notification config of an unknown task is TaskNotFound (-32001)', async () => {
    const res = await call('CreateTaskPushNotificationConfig', { taskId: 'resp_x', url: 'https://example.com/hook' });
    assert.equal(res.body.error.code, -32001);
    const list = await call('ListTaskPushNotificationConfigs', { taskId: 'resp_x' });
    assert.equal(list.body.error.code, -32001);
  });
});
