// Sources a wing declares, instead of a closed list in the kernel: the inbox
// and the session keys refuse a source nobody declared before anything runs or
// is stored under it; a source a new wing declares works like the old ones and
// is named in its own terms; the sources of today keep their names, key terms
// and stored values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reserveKey } from '../../core/idempotency/idempotency.js';
import type { IdempotencyClaim, InboxIdentity } from '../../core/idempotency/inbox-port.js';
import { declareInboxSource, declaredInboxSources, inboxKeyTerm } from '../../core/idempotency/inbox-sources.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { declareSessionKeySource, sessionForKey } from '../../core/sessions/session-keys.js';
import { createAgent } from '../support/api.js';
import { describeEachStore } from '../support/hub.js';

const notDeclared = (name: string) => (error: unknown) => error instanceof RangeError && error.message.includes(`"${name}" is not declared`);

await describeEachStore('sources a wing declares', (ctx) => {
  const db = () => ctx().hub.kernel.db;
  const inbox = () => ctx().hub.api.inbox;
  const identity = (source: string, key: string, body: unknown = { n: 1 }): InboxIdentity => ({
    projectId: ctx().projectId,
    source,
    key,
    operation: 'doThing',
    fingerprint: inbox().fingerprint('doThing', {}, body),
  });
  const keysStored = async (source: string) =>
    (await db().query<{ n: number }>('SELECT count(*)::integer AS n FROM idempotency_keys WHERE project_id = $1 AND source = $2', [ctx().projectId, source]))
      .rows[0].n;
  /** Work as a core command does it: the key reserved in the transaction of the work. */
  const work = (claim: IdempotencyClaim) => db().transaction(async (tx) => (await reserveKey(tx, ctx().projectId, claim, 'thing_1'), 'ran'));

  test('the sources of today are declared by their wings, with their key terms, and stored under their names', async () => {
    assert.deepEqual(
      ['a2a', 'http', 'mcp', 'queue', 'slack'].map((source) => [source, inboxKeyTerm(source)]),
      [
        ['a2a', 'messageId'],
        ['http', 'Idempotency-Key'],
        ['mcp', 'request id'],
        ['queue', 'idempotency_key'],
        ['slack', 'event_id'],
      ],
    );
    assert.equal(await inbox().once(identity('slack', 'ev-1'), work, async () => 'replayed'), 'ran');
    assert.equal(await keysStored('slack'), 1);
  });

  test('an undeclared source is refused before any work runs or any key is stored', async () => {
    let ran = false;
    await assert.rejects(
      inbox().once(
        identity('nodes-undeclared', 'k'),
        async (claim) => ((ran = true), work(claim)),
        async () => 'replayed',
      ),
      notDeclared('nodes-undeclared'),
    );
    assert.equal(ran, false);
    const claim: IdempotencyClaim = { source: 'nodes-undeclared', key: 'k', fingerprint: 'f', operation: 'doThing', retentionHours: 1 };
    await assert.rejects(work(claim), notDeclared('nodes-undeclared'));
    assert.equal(await keysStored('nodes-undeclared'), 0);
    assert.equal(declaredInboxSources().includes('nodes-undeclared'), false);
  });

  test("a new wing's source works like the others: its own key space, its conflicts named in its own terms", async () => {
    const source = declareInboxSource('nodes-test', 'invocation id');
    assert.equal(await inbox().once(identity(source, 'inv-1'), work, async () => 'replayed'), 'ran');
    assert.equal(await inbox().once(identity(source, 'inv-1'), work, async () => 'replayed'), 'replayed');
    await assert.rejects(
      inbox().once(identity(source, 'inv-1', { n: 2 }), work, async () => 'replayed'),
      (error) => error instanceof PalaiError && error.slug === 'idempotency-conflict' && error.message.startsWith('invocation id "inv-1"'),
    );
    assert.equal(await keysStored('nodes-test'), 1);
  });

  test('a source is declared once: the same declaration again is harmless; another key term or a bad name is refused', () => {
    assert.equal(declareInboxSource('twice-test', 'ticket'), 'twice-test');
    assert.equal(declareInboxSource('twice-test', 'ticket'), 'twice-test');
    assert.throws(() => declareInboxSource('twice-test', 'other term'), /declared twice, differently/);
    assert.throws(() => declareInboxSource('slack', 'message ts'), /declared twice, differently/);
    for (const bad of ['', 'Upper', '1st', 'has space', 'x'.repeat(33)]) assert.throws(() => declareInboxSource(bad, 'key'), RangeError, bad);
    assert.throws(() => declareInboxSource('no-term', ' '), RangeError);
  });

  test('session keys: an undeclared source is refused and leaves no session; a declared one maps each key to one session', async () => {
    const agent = await createAgent(ctx, { name: `keyed-${Math.random().toString(36).slice(2, 8)}`, model: { provider: 'fake' } });
    const sessions = async () =>
      (await db().query<{ n: number }>('SELECT count(*)::integer AS n FROM sessions WHERE project_id = $1', [ctx().projectId])).rows[0].n;
    const before = await sessions();
    await assert.rejects(
      db().transaction((tx) => sessionForKey(tx, ctx().projectId, 'nodes-undeclared', 'thread-1', agent.id)),
      (error) => error instanceof RangeError && error.message.includes('session key source "nodes-undeclared" is not declared'),
    );
    assert.equal(await sessions(), before);
    const source = declareSessionKeySource('nodes-test');
    const first = await db().transaction((tx) => sessionForKey(tx, ctx().projectId, source, 'thread-1', agent.id));
    const again = await db().transaction((tx) => sessionForKey(tx, ctx().projectId, source, 'thread-1', agent.id));
    assert.equal(again, first);
    const stored = await db().query<{ source: string }>('SELECT source FROM session_keys WHERE session_id = $1', [first]);
    assert.deepEqual(stored.rows, [{ source: 'nodes-test' }]);
  });
});
