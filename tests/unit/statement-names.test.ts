// Which statements get a prepared-statement name: the same text always the same
// name, different texts different names, a result that follows the table's
// columns never, and no more than the cap of distinct texts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../core/config.js';
import { StatementNames } from '../../core/store/statement-names.js';

test('the same text gets the same name, a different text another', () => {
  const names = new StatementNames();
  const a = names.nameFor('SELECT id FROM responses WHERE id = $1');
  assert.match(a ?? '', /^palai_[A-Za-z0-9_-]{20}$/);
  assert.equal(names.nameFor('SELECT id FROM responses WHERE id = $1'), a);
  assert.equal(new StatementNames().nameFor('SELECT id FROM responses WHERE id = $1'), a, 'stable across processes');
  assert.notEqual(names.nameFor('SELECT id FROM responses WHERE id = $2'), a);
});

test('a statement whose result follows the table (SELECT *, RETURNING *, t.*) stays unnamed; count(*) does not count', () => {
  const names = new StatementNames();
  for (const sql of [
    'SELECT * FROM agents WHERE id = $1',
    'UPDATE agents SET name = $2 WHERE id = $1 RETURNING *',
    'SELECT a.*, r.spec FROM agents a JOIN agent_revisions r ON r.id = $1',
    'select distinct * from t where a = $1',
    'SELECT id, r.* FROM r WHERE id = $1',
  ]) {
    assert.equal(names.nameFor(sql), undefined, sql);
  }
  assert.ok(names.nameFor('SELECT count(*)::integer AS n FROM responses WHERE project_id = $1'));
  assert.ok(names.nameFor('SELECT 2 * $1::integer AS doubled'));
});

test('past the cap of distinct texts, new texts go unnamed and known ones keep their names', () => {
  const names = new StatementNames();
  const first = names.nameFor('SELECT $1::integer AS n0');
  let named = 1;
  for (let i = 1; i < 1000; i++) if (names.nameFor(`SELECT $1::integer AS n${i}`)) named++;
  assert.ok(named >= 100 && named < 1000, `named ${named}`);
  assert.equal(names.nameFor('SELECT $1::integer AS n0'), first);
  assert.equal(names.nameFor('SELECT $1::integer AS a_new_one'), undefined);
});

test('PALAI_DATABASE_PREPARED_STATEMENTS: on by default, false turns it off, anything else is a configuration error', () => {
  assert.equal(loadConfig({}).databasePreparedStatements, true);
  assert.equal(loadConfig({ PALAI_DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements, false);
  assert.equal(loadConfig({ PALAI_DATABASE_PREPARED_STATEMENTS: '0' }).databasePreparedStatements, false);
  assert.equal(loadConfig({ PALAI_DATABASE_PREPARED_STATEMENTS: 'TRUE' }).databasePreparedStatements, true);
  assert.throws(
    () => loadConfig({ PALAI_DATABASE_PREPARED_STATEMENTS: 'maybe' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal((error as Error).message, 'PALAI_DATABASE_PREPARED_STATEMENTS must be true or false, got "maybe"');
      return true;
    },
  );
});
