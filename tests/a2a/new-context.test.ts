// A message without a contextId starts its context inside its own admission:
// the session, the task (response) and the messageId's one inbox record commit
// in one transaction, so nothing is left behind by a message that fails, and a
// resent message finds its task and makes no second session. Triggers
// installed for this test record which transaction inserted each row, and
// refuse a response whose input asks for it (a failing admission).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, test } from 'node:test';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

const AUDIT = `
  CREATE TABLE insert_audit (n serial PRIMARY KEY, tab text NOT NULL, row_key text NOT NULL, xact text NOT NULL);
  CREATE FUNCTION audit_insert() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO insert_audit (tab, row_key, xact) VALUES (TG_TABLE_NAME,
      coalesce((to_jsonb(NEW) ->> 'source') || ' ' || (to_jsonb(NEW) ->> 'key'), to_jsonb(NEW) ->> 'id'), pg_current_xact_id()::text);
    RETURN NEW;
  END $$;
  CREATE TRIGGER audit_inbox AFTER INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION audit_insert();
  CREATE TRIGGER audit_sessions AFTER INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION audit_insert();
  CREATE TRIGGER audit_responses AFTER INSERT ON responses FOR EACH ROW EXECUTE FUNCTION audit_insert();
  CREATE FUNCTION refuse_marked() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.input::text LIKE '%refuse this%' THEN RAISE EXCEPTION 'refused by the test'; END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER refuse_marked BEFORE INSERT ON responses FOR EACH ROW EXECUTE FUNCTION refuse_marked();`;

interface Inserted {
  tab: string;
  row_key: string;
  xact: string;
}

await describeEachStore('A2A contexts made by admission', (ctx) => {
  before(async () => {
    await ctx().hub.kernel.db.exec(AUDIT);
    await createAgent(ctx, { name: 'greeter', model: { provider: 'fake' } });
  });

  const rpc = async (messageId: string, text: string) => {
    const body = { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId, role: 'ROLE_USER', parts: [{ text }] } } };
    const res = await ctx().http.post('/a2a/greeter/jsonrpc').set(ctx().auth).set('A2A-Version', '1.0').send(body);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const sendMessage = async (messageId: string) => {
    const body = await rpc(messageId, 'hello');
    assert.ok(body.result?.task, JSON.stringify(body));
    return body.result.task as { id: string; contextId: string };
  };
  const insertedAfter = async (n: number): Promise<Inserted[]> =>
    (await ctx().hub.kernel.db.query<Inserted>('SELECT tab, row_key, xact FROM insert_audit WHERE n > $1 ORDER BY n', [n])).rows;
  const lastAudit = async (): Promise<number> =>
    (await ctx().hub.kernel.db.query<{ n: number }>('SELECT coalesce(max(n), 0)::integer AS n FROM insert_audit')).rows[0].n;

  test('a message without contextId makes its session, its task and one inbox record in one transaction; sent again, nothing more', async () => {
    const from = await lastAudit();
    const messageId = randomUUID();
    const task = await sendMessage(messageId);
    const inserted = await insertedAfter(from);
    // The inbox key is the messageId and a digest of the message (a resent one is the same message).
    assert.deepEqual(
      inserted.map(({ tab, row_key }) => [tab, row_key.replace(/#[0-9a-f]{16}$/, '')]).sort(),
      [
        ['idempotency_keys', `a2a ${messageId}`],
        ['responses', task.id],
        ['sessions', task.contextId],
      ].sort(),
      'one inbox key (the messageId), one session (the context), one response (the task)',
    );
    assert.equal(new Set(inserted.map((row) => row.xact)).size, 1, `all in one transaction: ${JSON.stringify(inserted)}`);

    const resent = await lastAudit();
    const again = await sendMessage(messageId);
    assert.deepEqual([again.id, again.contextId], [task.id, task.contextId], 'the same task, in the same context');
    assert.deepEqual(await insertedAfter(resent), [], 'nothing new: no session, no response, no inbox key');
  });

  test('a message whose admission fails leaves no session behind, and neither does its retry', async () => {
    const from = await lastAudit();
    const messageId = randomUUID();
    for (let attempt = 0; attempt < 2; attempt++) {
      const failed = await rpc(messageId, 'please refuse this');
      assert.equal(failed.error?.code, -32603, JSON.stringify(failed));
    }
    assert.deepEqual(await insertedAfter(from), [], 'no session, no inbox key, no response');
  });
});
