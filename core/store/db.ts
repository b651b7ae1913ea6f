// The Db port: the only view of the database the kernel has. Two implementations
// (PostgreSQL through `pg`, embedded PGlite) run the same SQL and migrations.

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

export interface Queryable {
  query<Row = Record<string, any>>(sql: string, params?: unknown[]): Promise<QueryResult<Row>>;
  /** Runs a multi-statement script without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type StoreKind = 'postgres' | 'pglite';

export interface Db extends Queryable {
  readonly kind: StoreKind;
  /** Runs `work` in one transaction; a throw rolls everything back. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Subscribes to NOTIFY on `channel`; resolves to the unsubscribe function. */
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** PostgreSQL's unique_violation (SQLSTATE 23505), raised by both stores. */
export const isUniqueViolation = (error: unknown): boolean => typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
