// Signals for surfaces, as a specification: a signal sent by name reaches the
// listeners of that name in every process (two hubs on one PostgreSQL, one
// embedded store's own listeners), and no others; the name and the payload are
// checked once, before anything is sent; a signal sent inside a transaction
// goes out at its commit and never after a rollback; a listener that throws
// does not keep the others from theirs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startHub, type Hub } from '../../cli/hub.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { createLogger } from '../../core/logger.js';
import { notifySignal } from '../../core/signals/signals.js';
import { MAX_SIGNAL_PAYLOAD_BYTES } from '../../core/signals/signal-port.js';
import { PgDb } from '../../core/store/pg-db.js';
import { testConfig } from '../support/hub.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';
import { until } from '../support/until.js';

const isProblem = (slug: string, pointer: string) => (error: unknown) =>
  error instanceof PalaiError && error.slug === slug && error.errors?.[0]?.pointer === pointer;

/** Every payload a listener heard, in order. */
function recorder(): { heard: string[]; listener: (payload: string) => void } {
  const heard: string[] = [];
  return { heard, listener: (payload) => void heard.push(payload) };
}

for (const kind of storeKinds) {
  describe(`signals [${kind}]`, { skip: kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false }, () => {
    let database: TestDatabase;
    let here: Hub;
    /** Another process: a second hub with its own store connection on PostgreSQL; the same store otherwise. */
    let there: Hub;
    let otherDb: PgDb | null = null;
    before(async () => {
      database = await openTestDatabase(kind);
      here = await startHub({ config: testConfig(), db: database.db, logger: createLogger('silent'), role: 'api' });
      otherDb = database.url ? new PgDb(database.url, 2) : null;
      there = await startHub({ config: testConfig(), db: otherDb ?? database.db, logger: createLogger('silent'), role: 'api' });
    });
    after(async () => {
      await there?.close();
      await here?.close();
      await otherDb?.close();
      await database?.drop();
    });

    test('a signal reaches the listeners of its name in every process, with its payload, and no others', async () => {
      const connected = recorder();
      const local = recorder();
      const changed = recorder();
      const stops = [
        await there.api.signals.listen('nodes.connected', connected.listener),
        await here.api.signals.listen('nodes.connected', local.listener),
        await there.api.signals.listen('triggers.changed', changed.listener),
      ];
      await here.api.signals.notify('nodes.connected', 'node_1');
      await here.api.signals.notify('nodes.connected');
      await until('both signals arrive elsewhere', () => connected.heard.length === 2);
      await until('and here', () => local.heard.length === 2);
      assert.deepEqual(connected.heard, ['node_1', '']);
      assert.deepEqual(local.heard, ['node_1', '']);
      // A signal of the other name, sent last, arrives after the two: none of them reached its listener.
      await here.api.signals.notify('triggers.changed', 'trg_1');
      await until('the other name arrives', () => changed.heard.length === 1);
      assert.deepEqual(changed.heard, ['trg_1']);
      for (const stop of stops) await stop();
    });

    test('a listener stopped hears nothing more; the others still hear', async () => {
      const stopped = recorder();
      const kept = recorder();
      const stop = await there.api.signals.listen('nodes.stopping', stopped.listener);
      const stopKept = await there.api.signals.listen('nodes.stopping', kept.listener);
      await stop();
      await here.api.signals.notify('nodes.stopping', 'one');
      await until('the kept listener hears it', () => kept.heard.length === 1);
      assert.deepEqual(stopped.heard, []);
      await stopKept();
    });

    test('a signal sent in a transaction goes out at its commit, never after a rollback', async () => {
      const heard = recorder();
      const stop = await there.api.signals.listen('nodes.committed', heard.listener);
      await assert.rejects(
        here.kernel.db.transaction(async (tx) => {
          await notifySignal(tx, 'nodes.committed', 'rolled back');
          throw new Error('roll back');
        }),
        /roll back/,
      );
      await here.kernel.db.transaction((tx) => notifySignal(tx, 'nodes.committed', 'committed'));
      await until('the committed one arrives', () => heard.heard.length > 0);
      assert.deepEqual(heard.heard, ['committed']);
      await stop();
    });

    test('a listener that throws does not keep the other listeners from the signal', async () => {
      const kept = recorder();
      const stopThrowing = await there.api.signals.listen('nodes.flaky', () => {
        throw new Error('listener bug');
      });
      const stopKept = await there.api.signals.listen('nodes.flaky', kept.listener);
      await here.api.signals.notify('nodes.flaky', 'x');
      await until('the other listener hears it', () => kept.heard.length === 1);
      await stopThrowing();
      await stopKept();
    });

    test('a bad name is validation-failed, a payload over the limit payload-too-large, before anything is sent', async () => {
      for (const name of ['', 'Nodes.connected', 'nodes..connected', 'nodes connected', '.nodes', 'nodes:x', 'n'.repeat(65)]) {
        await assert.rejects(here.api.signals.notify(name, 'x'), isProblem('validation-failed', '/name'), name);
        await assert.rejects(
          here.api.signals.listen(name, () => undefined),
          isProblem('validation-failed', '/name'),
          name,
        );
      }
      const limit = 'é'.repeat(MAX_SIGNAL_PAYLOAD_BYTES / 2);
      const heard = recorder();
      const stop = await there.api.signals.listen('nodes.big', heard.listener);
      await assert.rejects(here.api.signals.notify('nodes.big', `${limit}x`), isProblem('payload-too-large', '/payload'));
      await here.api.signals.notify('nodes.big', limit);
      await until('the payload at the limit arrives', () => heard.heard.length > 0);
      assert.deepEqual(heard.heard, [limit], 'the one over the limit was never sent');
      await stop();
    });
  });
}
