// A worker's end first tries the statement without the session's writes when
// the response's row said it has no session. The hint is only a first try: the
// statement holds only on a row with no session, so a wrong one costs a second
// statement and never a session's items.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { finishAtOnce } from '../../core/responses/status-writer.js';
import { createAgent, createSession, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

await describeEachStore("a worker's end told the response has no session", (ctx) => {
  before(async () => {
    await createAgent(ctx, {
      name: 'asker',
      model: { provider: 'fake', script: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which?' } }] }, { text: 'ok' }] },
      tools: [{ type: 'builtin', name: 'ask_user' }],
    });
  });

  /** A response waiting for input, in a session of its own, and the session's items as they are then. */
  const waitingInSession = async () => {
    const session = await createSession(ctx, { agent: 'asker' });
    const body = await respond(ctx, { model: 'asker', session_id: session.id, input: 'go' });
    assert.equal(body.palai_status, 'waiting_for_input');
    return { sessionId: session.id as string, responseId: body.id as string };
  };
  const sessionItems = async (sessionId: string) =>
    (
      await ctx().hub.kernel.db.query<{ type: string; response_id: string | null; position: number }>(
        "SELECT item->>'type' AS type, response_id, position FROM session_items WHERE session_id = $1 ORDER BY position",
        [sessionId],
      )
    ).rows;
  const end = (responseId: string, sessionless?: boolean) =>
    finishAtOnce(
      ctx().hub.kernel.db,
      { projectId: ctx().projectId, responseId, leaseToken: null },
      { status: 'canceled', output: [], error: null, ...(sessionless === undefined ? {} : { sessionless }) },
    );

  test('a wrong hint still gives the session every item the end adds, as the whole statement does', async () => {
    const told = await waitingInSession();
    const untold = await waitingInSession();
    const toldBefore = await sessionItems(told.sessionId);
    const ended = await end(told.responseId, true);
    const endedUntold = await end(untold.responseId);
    assert.equal(ended.status, 'canceled');
    assert.equal(ended.session_id, told.sessionId);
    const toldAfter = await sessionItems(told.sessionId);
    const untoldAfter = await sessionItems(untold.sessionId);
    assert.ok(toldAfter.length > toldBefore.length, `the end adds the response's output to its session (${toldBefore.length} → ${toldAfter.length} items)`);
    assert.deepEqual(
      toldAfter.map((i) => [i.type, i.position]),
      untoldAfter.map((i) => [i.type, i.position]),
      'the same items as the end of a twin response with no hint',
    );
    assert.deepEqual(
      toldAfter.filter((i) => i.response_id === told.responseId).map((i) => i.type),
      ['message', ...ended.output.map((item) => item.type)],
      "the session holds the response's input, then its output",
    );
    assert.equal(endedUntold.status, 'canceled');
  });

  test('a response with no session ends with the hint, once, and its journal ends with the terminal status', async () => {
    const body = await respond(ctx, { model: 'asker', input: 'go' });
    assert.equal(body.palai_status, 'waiting_for_input');
    const ended = await end(body.id, true);
    assert.equal(ended.status, 'canceled');
    assert.equal(ended.session_id, null);
    const { rows } = await ctx().hub.kernel.db.query<{ type: string; status: string | null }>(
      "SELECT type, data->>'status' AS status FROM response_events WHERE response_id = $1 ORDER BY sequence DESC LIMIT 1",
      [body.id],
    );
    assert.deepEqual(rows, [{ type: 'status', status: 'canceled' }]);
    await assert.rejects(end(body.id, true), /already canceled/);
  });
});
