// The one lookup of a project's named resources: a ref with the resource's id
// prefix is an id, any other ref a name; another project's row is never found;
// the owner's not-found problem names the ref; FOR UPDATE locks the resource's
// row, also when it is read through an outer join. On a table of the test's own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PalaiError } from '../../core/errors/palai-error.js';
import { findByRef, resourceLookup, type ResourceTable } from '../../core/resources/find-by-ref.js';
import type { Queryable } from '../../core/store/db.js';
import { openTestDatabase, postgresUnavailable, storeKinds, type TestDatabase } from '../support/stores.js';

interface WidgetRow {
  id: string;
  project_id: string;
  name: string;
  colour: string | null;
}

const WIDGETS: ResourceTable = { table: 'widgets', idPrefix: 'wdg_' };
/** Read with a column of another table, which a widget may not have a row in. */
const PAINTED: ResourceTable = { table: 'w', idPrefix: 'wdg_', select: 'SELECT w.*, p.colour FROM widgets w LEFT JOIN paints p ON p.widget_id = w.id' };
const widgetNotFound = (ref: string) => new PalaiError('not-found', `No widget with id or name ${JSON.stringify(ref)} in this project.`);

/** Whether the transaction running this statement holds a row lock on the widget (FOR UPDATE marks the row with its id). */
async function lockedHere(tx: Queryable, id: string): Promise<boolean> {
  const { rows } = await tx.query<{ mine: boolean }>('SELECT xmax = pg_current_xact_id()::xid AS mine FROM widgets WHERE id = $1', [id]);
  return rows[0].mine;
}

for (const kind of storeKinds) {
  const skip = kind === 'postgres' ? ((await postgresUnavailable()) ?? false) : false;

  describe(`finding a resource by id or name [${kind}]`, { skip }, () => {
    let database: TestDatabase;
    before(async () => {
      database = await openTestDatabase(kind);
      await database.db.exec(`
        CREATE TABLE widgets (id text PRIMARY KEY, project_id text NOT NULL, name text NOT NULL, UNIQUE (project_id, name));
        CREATE TABLE paints (widget_id text PRIMARY KEY REFERENCES widgets(id), colour text NOT NULL);
        INSERT INTO widgets VALUES ('wdg_1', 'prj_a', 'gear'), ('wdg_2', 'prj_a', 'wdg_1-copy'), ('wdg_3', 'prj_b', 'gear');
        INSERT INTO paints VALUES ('wdg_3', 'red');`);
    });
    after(() => database?.drop());

    test('a ref with the id prefix is an id; any other ref is a name, in the project only', async () => {
      const { db } = database;
      assert.equal((await findByRef<WidgetRow>(db, WIDGETS, 'prj_a', 'wdg_1'))?.name, 'gear');
      assert.equal((await findByRef<WidgetRow>(db, WIDGETS, 'prj_a', 'gear'))?.id, 'wdg_1');
      assert.equal((await findByRef<WidgetRow>(db, WIDGETS, 'prj_b', 'gear'))?.id, 'wdg_3');
      // A name that looks like an id is looked for as an id, and an id is never a name.
      assert.equal(await findByRef(db, WIDGETS, 'prj_a', 'wdg_1-copy'), null);
      assert.equal(await findByRef(db, WIDGETS, 'prj_a', '1'), null);
      // Another project's widget, by its id.
      assert.equal(await findByRef(db, WIDGETS, 'prj_a', 'wdg_3'), null);
    });

    test("a ref that names nothing is the owner's not-found problem, naming the ref", async () => {
      await assert.rejects(findByRef(database.db, WIDGETS, 'prj_a', 'wdg_3', { notFound: widgetNotFound }), (error: unknown) => {
        assert.ok(error instanceof PalaiError);
        assert.equal(error.slug, 'not-found');
        assert.equal(error.message, 'No widget with id or name "wdg_3" in this project.');
        return true;
      });
      const found = await findByRef<WidgetRow>(database.db, WIDGETS, 'prj_a', 'gear', { notFound: widgetNotFound });
      assert.equal(found.id, 'wdg_1');
    });

    test('a select of its own reads the joined columns', async () => {
      assert.equal((await findByRef<WidgetRow>(database.db, PAINTED, 'prj_b', 'gear'))?.colour, 'red');
      assert.equal((await findByRef<WidgetRow>(database.db, PAINTED, 'prj_a', 'wdg_1'))?.colour, null);
    });

    test("forUpdate locks the resource's row to the end of the transaction, through an outer join too", async () => {
      await database.db.transaction(async (tx) => {
        await findByRef(tx, WIDGETS, 'prj_a', 'gear');
        assert.equal(await lockedHere(tx, 'wdg_1'), false, 'a plain find locks nothing');
        await findByRef(tx, WIDGETS, 'prj_a', 'gear', { forUpdate: true });
        assert.equal(await lockedHere(tx, 'wdg_1'), true);
      });
      await database.db.transaction(async (tx) => {
        // Unpainted: the nullable side of the join has no row, and only the widget is locked.
        const row = await findByRef<WidgetRow>(tx, PAINTED, 'prj_a', 'wdg_1', { forUpdate: true, notFound: widgetNotFound });
        assert.equal(row.colour, null);
        assert.equal(await lockedHere(tx, 'wdg_1'), true);
      });
    });

    test("a resource's lookups, bound once: find answers null, require its not-found problem, and both can lock", async () => {
      const widgets = resourceLookup<WidgetRow>(WIDGETS, widgetNotFound);
      assert.equal((await widgets.find(database.db, 'prj_a', 'gear'))?.id, 'wdg_1');
      assert.equal(await widgets.find(database.db, 'prj_a', 'cog'), null);
      await assert.rejects(widgets.require(database.db, 'prj_a', 'cog'), { message: 'No widget with id or name "cog" in this project.' });
      await database.db.transaction(async (tx) => {
        assert.equal((await widgets.require(tx, 'prj_b', 'wdg_3', true)).name, 'gear');
        assert.equal(await lockedHere(tx, 'wdg_3'), true);
      });
    });
  });
}
