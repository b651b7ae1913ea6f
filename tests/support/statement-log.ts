// The Db port with a record of every statement the kernel sends through it, and
// the transaction each ran in: for tests that prove what one operation reads
// and writes (how often it looks an agent up, that it commits in one
// transaction), against the real store underneath.
import type { Db, Queryable } from '../../core/store/db.js';

export interface LoggedStatement {
  /** The ordinal of the transaction it ran in; null for a statement outside one. */
  transaction: number | null;
  sql: string;
}

export class StatementLog implements Db {
  readonly statements: LoggedStatement[] = [];
  private transactions = 0;

  constructor(private readonly inner: Db) {}

  get kind() {
    return this.inner.kind;
  }

  /** The statements logged while `work` ran (other work running meanwhile included). */
  async during(work: () => Promise<unknown>): Promise<LoggedStatement[]> {
    const start = this.statements.length;
    await work();
    return this.statements.slice(start);
  }

  query<Row>(sql: string, params?: unknown[]) {
    this.statements.push({ transaction: null, sql });
    return this.inner.query<Row>(sql, params);
  }

  exec(sql: string) {
    this.statements.push({ transaction: null, sql });
    return this.inner.exec(sql);
  }

  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const transaction = ++this.transactions;
    const log = (sql: string) => this.statements.push({ transaction, sql });
    return this.inner.transaction((tx) =>
      work({
        query: <Row>(sql: string, params?: unknown[]) => (log(sql), tx.query<Row>(sql, params)),
        exec: (sql: string) => (log(sql), tx.exec(sql)),
      }),
    );
  }

  listen(channel: string, onMessage: (payload: string) => void) {
    return this.inner.listen(channel, onMessage);
  }

  close() {
    return this.inner.close();
  }
}
