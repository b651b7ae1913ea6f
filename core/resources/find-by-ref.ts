// A project's named resources (agents, model connections, remote agents, queue
// consumers, Slack bots, MCP servers) are addressed by a `ref`: the id when it
// has the resource's id prefix, else the name, which is unique in the project.
// This is the one lookup; each resource names its table and its not-found problem.
import type { PalaiError } from '../errors/palai-error.js';
import type { Queryable } from '../store/db.js';

/** Where a resource's rows are and how its ids begin. */
export interface ResourceTable {
  /** The table, as the statement names it (its alias in `select`): its id, name and project_id are matched, and FOR UPDATE locks its row. */
  table: string;
  /** The id prefix (`agt_`): a ref that starts with it is an id, any other is a name. */
  idPrefix: string;
  /** The statement up to WHERE, for a row read with more than the table's columns (a join). Default `SELECT * FROM <table>`. */
  select?: string;
}

export interface FindOptions {
  /** Lock the resource's row to the end of the transaction. Default false. */
  forUpdate?: boolean;
}

/** The resource named by `ref` in the project, or null; with `notFound`, that error instead of null. */
export async function findByRef<Row>(
  db: Queryable,
  where: ResourceTable,
  projectId: string,
  ref: string,
  options: FindOptions & { notFound: (ref: string) => PalaiError },
): Promise<Row>;
export async function findByRef<Row>(db: Queryable, where: ResourceTable, projectId: string, ref: string, options?: FindOptions): Promise<Row | null>;
export async function findByRef<Row>(
  db: Queryable,
  { table, idPrefix, select }: ResourceTable,
  projectId: string,
  ref: string,
  options: FindOptions & { notFound?: (ref: string) => PalaiError } = {},
): Promise<Row | null> {
  const column = ref.startsWith(idPrefix) ? 'id' : 'name';
  const lock = options.forUpdate ? ` FOR UPDATE OF ${table}` : '';
  const { rows } = await db.query<Row>(`${select ?? `SELECT * FROM ${table}`} WHERE ${table}.project_id = $1 AND ${table}.${column} = $2${lock}`, [
    projectId,
    ref,
  ]);
  const row = rows[0] ?? null;
  if (row === null && options.notFound) throw options.notFound(ref);
  return row;
}

/** A resource's two lookups, bound to where its rows are and what it answers when a ref names nothing. */
export interface ResourceLookup<Row> {
  /** The resource, or null. */
  find(db: Queryable, projectId: string, ref: string, forUpdate?: boolean): Promise<Row | null>;
  /** The resource, or the resource's not-found problem. */
  require(db: Queryable, projectId: string, ref: string, forUpdate?: boolean): Promise<Row>;
}

export const resourceLookup = <Row>(where: ResourceTable, notFound: (ref: string) => PalaiError): ResourceLookup<Row> => ({
  find: (db, projectId, ref, forUpdate = false) => findByRef<Row>(db, where, projectId, ref, { forUpdate }),
  require: (db, projectId, ref, forUpdate = false) => findByRef<Row>(db, where, projectId, ref, { forUpdate, notFound }),
});
