// The embedded store starts small and from a template: its settings are the
// memory-sized ones, a new store is copied in whole or not at all, and what was
// written survives a reopen. (Its idle memory is measured in bench/, not here.)
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { PgliteDb } from '../../core/store/pglite-db.js';
import { storeTemplate } from '../../core/store/pglite-template.js';

const home = mkdtempSync(join(tmpdir(), 'palai-store-test-'));
after(() => rmSync(home, { recursive: true, force: true }));

async function settingsOf(db: PgliteDb): Promise<Record<string, string>> {
  const { rows } = await db.query<{ name: string; setting: string }>(
    "SELECT name, current_setting(name) AS setting FROM pg_settings WHERE name IN ('shared_buffers', 'maintenance_work_mem')",
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
}

test('the template is an initialized data directory and its tar', async () => {
  const template = await storeTemplate();
  assert.ok(existsSync(join(template.dataDir, 'PG_VERSION')));
  assert.ok(existsSync(template.tarFile));
  if (template.temporary) rmSync(join(template.dataDir, '..'), { recursive: true, force: true });
});

test('a new store on disk opens from the template, keeps what was written and reopens with it', async () => {
  const dataDir = join(home, 'fresh', 'db');
  const first = await PgliteDb.open(dataDir);
  await first.exec("CREATE TABLE kept (value text); INSERT INTO kept VALUES ('written')");
  await first.close();
  const again = await PgliteDb.open(dataDir);
  try {
    assert.deepEqual((await again.query('SELECT value FROM kept')).rows, [{ value: 'written' }]);
  } finally {
    await again.close();
  }
  assert.deepEqual(readdirSync(join(home, 'fresh')).sort(), ['db'], 'no staging copy or lock is left behind');
});

test('stores on disk and in memory run with memory-sized shared buffers and maintenance memory', async () => {
  for (const dataDir of [join(home, 'settings', 'db'), null]) {
    const db = await PgliteDb.open(dataDir);
    try {
      assert.deepEqual(await settingsOf(db), { shared_buffers: '16MB', maintenance_work_mem: '16MB' }, String(dataDir));
    } finally {
      await db.close();
    }
  }
});

test('a directory that holds files but no store is refused and left as it was', async () => {
  const dataDir = join(home, 'foreign', 'db');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'notes.txt'), 'mine');
  await assert.rejects(PgliteDb.open(dataDir), /holds files but no embedded store/);
  assert.deepEqual(readdirSync(dataDir), ['notes.txt']);
  assert.ok(!existsSync(join(home, 'foreign', 'palai-db.lock')), 'the lock is released');
});

test('an empty directory, or a copy cut off midway beside it, does not stop a new store', async () => {
  const dataDir = join(home, 'interrupted', 'db');
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(`${dataDir}.new`);
  writeFileSync(join(`${dataDir}.new`, 'PG_VERSION'), 'partial');
  const db = await PgliteDb.open(dataDir);
  try {
    assert.equal((await db.query<{ one: number }>('SELECT 1 AS one')).rows[0].one, 1);
  } finally {
    await db.close();
  }
  assert.deepEqual(readdirSync(join(home, 'interrupted')).sort(), ['db']);
});
