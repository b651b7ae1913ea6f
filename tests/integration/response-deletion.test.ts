// DELETE /v1/responses/{id}: the response and its journal go, a running one is
// stopped first, its session keeps the items it added, and nothing else breaks.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { createAgent, createSession, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';
import { assertMatchesSpec, assertProblem } from '../support/spec.js';

await describeEachStore('deleting responses', (ctx) => {
  let server: Server;
  let client: OpenAI;

  const remove = async (id: string, auth = ctx().auth) => {
    const res = await ctx().http.delete(`/v1/responses/${id}`).set(auth);
    assertMatchesSpec(res, 'deleteResponse');
    return res;
  };
  const rowsOf = async (table: string, id: string) =>
    (await ctx().hub.kernel.db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${table} WHERE response_id = $1`, [id])).rows[0].n;

  before(async () => {
    server = ctx().hub.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    client = new OpenAI({ apiKey: ctx().apiKey, baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, maxRetries: 0 });
    await createAgent(ctx, { name: 'deletable', model: { provider: 'fake' } });
    await createAgent(ctx, {
      name: 'slow-talker',
      model: { provider: 'fake', script: [{ text: 'one two three four five six seven eight nine ten', delay_ms: 300 }] },
    });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a finished response is gone with its journal and tool calls; a second delete is a 404', async () => {
    const { id } = await respond(ctx, { model: 'deletable', input: 'forget me' });
    assert.ok((await rowsOf('response_events', id)) > 0);
    const res = await remove(id);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { id, object: 'response.deleted', deleted: true });
    assertProblem(await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth), 404, 'not-found');
    assertProblem(await ctx().http.get(`/v1/responses/${id}/events`).set(ctx().auth), 404, 'not-found');
    assertProblem(await ctx().http.get(`/v1/responses/${id}/input_items`).set(ctx().auth), 404, 'not-found');
    assert.equal(await rowsOf('response_events', id), 0);
    assert.equal(await rowsOf('tool_calls', id), 0);
    const listed = await ctx().http.get('/v1/responses?limit=100').set(ctx().auth);
    assert.ok(!listed.body.data.some((r: { id: string }) => r.id === id));
    assertProblem(await remove(id), 404, 'not-found');
  });

  test('the official SDK deletes a response', async () => {
    const response = await client.responses.create({ model: 'deletable', input: 'sdk delete' });
    await client.responses.delete(response.id);
    await assert.rejects(client.responses.retrieve(response.id), OpenAI.NotFoundError);
  });

  test('its session keeps the items it added; a response that continued from it stays readable', async () => {
    const session = await createSession(ctx, { agent: 'deletable' });
    const first = await respond(ctx, { model: 'deletable', input: 'in the session', session_id: session.id });
    const itemsBefore = (await ctx().http.get(`/v1/sessions/${session.id}/items`).set(ctx().auth)).body.data;
    const parent = await respond(ctx, { model: 'deletable', input: 'parent' });
    const child = await respond(ctx, { model: 'deletable', input: 'child', previous_response_id: parent.id });
    assert.equal((await remove(first.id)).status, 200);
    assert.equal((await remove(parent.id)).status, 200);
    assert.deepEqual((await ctx().http.get(`/v1/sessions/${session.id}/items`).set(ctx().auth)).body.data, itemsBefore);
    const readable = await ctx().http.get(`/v1/responses/${child.id}`).set(ctx().auth);
    assert.equal(readable.status, 200);
    assert.equal(readable.body.previous_response_id, null);
    assert.equal(readable.body.output_text, 'child');
    const next = await respond(ctx, { model: 'deletable', input: 'still works', session_id: session.id });
    assert.equal(next.status, 'completed');
  });

  test('a running response is stopped and deleted; its open stream ends; the workers go on', async () => {
    const started = await respond(ctx, { model: 'slow-talker', input: 'x', background: true });
    for (let i = 0; i < 200 && (await ctx().http.get(`/v1/responses/${started.id}`).set(ctx().auth)).body.status !== 'in_progress'; i++) await sleep(25);
    // Sent now (a supertest request starts when it is awaited), and given time to stream its first events.
    const stream = ctx()
      .http.get(`/v1/responses/${started.id}/events`)
      .set(ctx().auth)
      .timeout(20_000)
      .then((res) => res);
    await sleep(300);
    assert.equal((await remove(started.id)).status, 200);
    const ended = await stream;
    assert.equal(ended.status, 200, 'the stream that was open ends instead of waiting forever');
    assert.match(ended.text, /event: response\.in_progress/, 'it had been streaming the run');
    assertProblem(await ctx().http.get(`/v1/responses/${started.id}`).set(ctx().auth), 404, 'not-found');
    await sleep(500);
    assert.equal(await rowsOf('response_events', started.id), 0, 'the interrupted worker wrote nothing after the delete');
    const after = await respond(ctx, { model: 'deletable', input: 'next one' });
    assert.equal(after.status, 'completed');
  });

  test("another project's key cannot delete it", async () => {
    const { id } = await respond(ctx, { model: 'deletable', input: 'mine' });
    assertProblem(await remove(id, { Authorization: `Bearer ${await ctx().newProjectKey()}` }), 404, 'not-found');
    assert.equal((await ctx().http.get(`/v1/responses/${id}`).set(ctx().auth)).status, 200);
  });
});
