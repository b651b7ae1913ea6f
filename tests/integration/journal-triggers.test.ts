// The two row triggers on the hot path are called only where they change
// something (migration 0035), and give what they gave before: a journal row's
// tx_id is never below its predecessor's, and status_changed_at moves when the
// status does — stamped by the trigger, or set by the writer itself.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Queryable } from '../../core/store/db.js';
import { createAgent, respond } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

describeEachStore('journal and status triggers', (ctx) => {
  const db = () => ctx().hub.kernel.db;
  let source = '';
  let copies = 0;

  before(async () => {
    await createAgent(ctx, { name: 'triggered', model: { provider: 'fake', script: [{ text: 'one two three' }] } });
    source = (await respond(ctx, { model: 'triggered', input: 'go' })).id as string;
  });

  /** A response row like the answered one, with no journal rows of its own. */
  const copyResponse = async (): Promise<string> => {
    const id = `${source}_copy${++copies}`;
    await db().query(`INSERT INTO responses SELECT (jsonb_populate_record(r, jsonb_build_object('id', $2::text))).* FROM responses r WHERE r.id = $1`, [
      source,
      id,
    ]);
    return id;
  };
  const append = async (q: Queryable, responseId: string, first: number | null, last: number) =>
    (
      await q.query<{ tx_id: string; xid: string }>(
        `INSERT INTO response_journal (project_id, response_id, first_sequence, last_sequence, type, data)
         VALUES ($1, $2, $3, $4, 'probe', '{}') RETURNING tx_id::text, pg_current_xact_id()::text AS xid`,
        [ctx().projectId, responseId, first, last],
      )
    ).rows[0];
  /** Puts a row's tx_id far above any transaction's, as a predecessor written by a later-numbered transaction would have it. */
  const raise = async (responseId: string, last: number) =>
    (
      await db().query<{ tx_id: string }>(
        `UPDATE response_journal SET tx_id = (pg_current_xact_id()::text::bigint + 1000000)::text::xid8
          WHERE response_id = $1 AND last_sequence = $2 RETURNING tx_id::text`,
        [responseId, last],
      )
    ).rows[0].tx_id;

  test("a row from sequence 0 takes its own transaction's id; every later row takes at least its predecessor's", async () => {
    const id = await copyResponse();
    const first = await db().transaction((tx) => append(tx, id, null, 0));
    assert.equal(first.tx_id, first.xid);

    const raised = await raise(id, 0);
    const second = await append(db(), id, null, 1);
    assert.equal(second.tx_id, raised, 'a single-event row after a raised predecessor');
    assert.ok(BigInt(second.xid) < BigInt(raised));

    const raisedAgain = await raise(id, 1);
    assert.equal((await append(db(), id, 2, 4)).tx_id, raisedAgain, 'a run of events after a raised predecessor');

    const run = await copyResponse();
    const opening = await db().transaction((tx) => append(tx, run, 0, 2));
    assert.equal(opening.tx_id, opening.xid, 'a run from sequence 0 has no predecessor');
  });

  test('status_changed_at moves with the status, stamped by the trigger or set by the writer, and not otherwise', async () => {
    const answered = await db().query<{ same: boolean }>('SELECT status_changed_at = completed_at AS same FROM responses WHERE id = $1', [source]);
    assert.equal(answered.rows[0].same, true, 'the end sets it with completed_at');

    const id = await copyResponse();
    const at = async () =>
      (await db().query<{ at: Date; status: string }>('SELECT status_changed_at AS at, status FROM responses WHERE id = $1', [id])).rows[0];
    await db().query(`UPDATE responses SET status_changed_at = '2000-01-01T00:00:00Z' WHERE id = $1`, [id]);
    await db().query('UPDATE responses SET status = status WHERE id = $1', [id]);
    assert.equal((await at()).at.toISOString(), '2000-01-01T00:00:00.000Z', 'the same status is no change');

    await db().query(`UPDATE responses SET status = 'failed' WHERE id = $1`, [id]);
    const stamped = await at();
    assert.equal(stamped.status, 'failed');
    assert.ok(Date.now() - stamped.at.getTime() < 60_000, `stamped now, not ${stamped.at.toISOString()}`);

    await db().query(`UPDATE responses SET status = 'canceled', status_changed_at = '2001-01-01T00:00:00Z' WHERE id = $1`, [id]);
    assert.equal((await at()).at.toISOString(), '2001-01-01T00:00:00.000Z', "the writer's own value stands");
  });
});
