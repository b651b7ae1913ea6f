// The kernel invariants of ARCHITECTURE.md §3 that are best proven below the
// HTTP surface: atomic admission, fencing, leased claims, secrets at rest.
// No worker runs here, so every claim is the test's own.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createAgent } from '../../core/agents/agents.js';
import { createApiKey } from '../../core/auth/api-keys.js';
import { createProject } from '../../core/auth/projects.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { appendEvent, LeaseLostError, readEvents } from '../../core/journal/journal.js';
import { createLogger } from '../../core/logger.js';
import { admitResponse } from '../../core/responses/admission.js';
import type { Db, StoreKind } from '../../core/store/db.js';
import { migrate } from '../../core/store/migrate.js';
import { claimNext } from '../../core/runner/claim.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

async function suite(kind: StoreKind) {
  const unavailable = kind === 'postgres' ? await postgresUnavailable() : null;
  describe(`kernel invariants [${kind}]`, { skip: unavailable ?? false }, () => {
    let database: TestDatabase;
    let db: Db;
    let projectId: string;
    const countRows = async (table: string) =>
      (await db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM ${table} WHERE project_id = $1`, [projectId])).rows[0].n;

    before(async () => {
      database = await openTestDatabase(kind);
      db = database.db;
      await migrate(db);
      projectId = (await createProject(db, 'invariants')).id;
      await createAgent(db, projectId, { name: 'inv', model: { provider: 'fake' } });
    });
    after(() => database.drop());

    test('admission is atomic: a rejected admission leaves no response, item or event behind', async () => {
      const before = [await countRows('responses'), await countRows('response_events')];
      await assert.rejects(
        admitResponse(db, projectId, { agent: 'inv', input: [{ role: 'user', content: 'x' }], previous_response_id: 'resp_does_not_exist' }),
        (error: unknown) => error instanceof PalaiError && error.slug === 'not-found',
      );
      assert.deepEqual([await countRows('responses'), await countRows('response_events')], before);
    });

    test('an admitted response is queued with its queued status event as sequence 0', async () => {
      const row = await admitResponse(db, projectId, { agent: 'inv', input: [{ role: 'user', content: 'x' }] });
      assert.equal(row.status, 'queued');
      const events = await readEvents(db, row.id, -1);
      assert.deepEqual(
        events.map((e) => [e.sequence, e.event.type, e.event.type === 'status' && e.event.status]),
        [[0, 'status', 'queued']],
      );
    });

    test('a writer with a stale fencing token is rejected and writes nothing', async () => {
      while (await claimNext(db, 'drain', 30)); // no leftovers from other tests
      const row = await admitResponse(db, projectId, { agent: 'inv', input: [{ role: 'user', content: 'fenced' }] });
      const first = (await claimNext(db, 'worker-a', 30))!;
      assert.equal(first.responseId, row.id);
      await db.query("UPDATE responses SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [row.id]);
      const second = (await claimNext(db, 'worker-b', 30))!;
      assert.equal(second.responseId, row.id);
      assert.equal(second.takeover, true);
      assert.ok(second.leaseToken > first.leaseToken);
      const stale = { projectId, responseId: row.id, leaseToken: first.leaseToken };
      const late = { type: 'text.delta', item_id: 'msg_late', output_index: 0, content_index: 0, delta: 'late' } as const;
      await assert.rejects(appendEvent(db, stale, late), LeaseLostError);
      const fresh = { ...stale, leaseToken: second.leaseToken };
      const sequence = await appendEvent(db, fresh, { ...late, delta: 'on time' });
      const events = await readEvents(db, row.id, -1);
      assert.deepEqual(
        events.map((e) => e.sequence),
        [0, sequence],
      );
      assert.ok(!events.some((e) => e.event.type === 'text.delta' && e.event.delta === 'late'));
    });

    test('concurrent claims never hand the same response to two workers', async () => {
      while (await claimNext(db, 'drain', 30));
      const ids = new Set<string>();
      for (let i = 0; i < 30; i++) ids.add((await admitResponse(db, projectId, { agent: 'inv', input: [{ role: 'user', content: `n${i}` }] })).id);
      const claimed: string[] = [];
      await Promise.all(
        ['w1', 'w2', 'w3'].map(async (worker) => {
          for (let claim = await claimNext(db, worker, 30); claim; claim = await claimNext(db, worker, 30)) claimed.push(claim.responseId);
        }),
      );
      assert.equal(claimed.length, ids.size);
      assert.deepEqual(new Set(claimed), ids);
    });

    test('a live lease is not taken; an expired one is taken over', async () => {
      while (await claimNext(db, 'drain', 30));
      const row = await admitResponse(db, projectId, { agent: 'inv', input: [{ role: 'user', content: 'leased' }] });
      assert.equal((await claimNext(db, 'owner', 30))?.responseId, row.id);
      assert.equal(await claimNext(db, 'other', 30), null);
      await db.query("UPDATE responses SET lease_expires_at = now() - interval '1 second' WHERE id = $1", [row.id]);
      const takeover = await claimNext(db, 'other', 30);
      assert.equal(takeover?.responseId, row.id);
      assert.equal(takeover?.takeover, true);
    });

    test('API keys are stored hashed: the secret appears nowhere in the key table', async () => {
      const key = await createApiKey(db, projectId, 'secret-check');
      const { rows } = await db.query('SELECT * FROM api_keys WHERE id = $1', [key.id]);
      assert.ok(!JSON.stringify(rows).includes(key.secret));
      assert.ok(!JSON.stringify(rows).includes(key.secret.slice(12)));
    });
  });
}

for (const kind of storeKinds) await suite(kind);

test('logs redact authorization headers, API keys and passwords', () => {
  let out = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      out += chunk;
      done();
    },
  });
  const logger = createLogger('info', sink);
  logger.info(
    { req: { headers: { authorization: 'Bearer palai_sk_leak_me_please' } }, api_key: 'sk-should-not-show', databaseUrl: 'postgres://u:hunter2@h/db' },
    'x',
  );
  logger.info({ connection: { password: 'hunter2', secret: 'sssh' } }, 'y');
  assert.doesNotMatch(out, /palai_sk_leak_me_please|sk-should-not-show|hunter2|sssh/);
  assert.match(out, /\[redacted\]/);
});
