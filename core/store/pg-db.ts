// PostgreSQL through node-postgres: a pool for queries and transactions, and one
// dedicated connection for LISTEN that reconnects after a database restart.
import pg from 'pg';
import type { Db, Queryable, QueryResult } from './db.js';
import { StatementNames } from './statement-names.js';

type Listener = (payload: string) => void;

const CONNECT_TIMEOUT_MS = 10_000;

export class PgDb implements Db {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly listeners = new Map<string, Set<Listener>>();
  private listenClient: pg.Client | null = null;
  private connectingListener: Promise<pg.Client> | null = null;
  private closed = false;
  private readonly names: StatementNames | null;

  constructor(
    private readonly url: string,
    poolSize = 10,
    options: { preparedStatements?: boolean } = {},
  ) {
    this.names = options.preparedStatements === false ? null : new StatementNames();
    // A bound on connecting, so an unreachable host fails in seconds, not after the OS TCP timeout.
    this.pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    // An idle client dying (e.g. a database restart) must not crash the process.
    this.pool.on('error', () => undefined);
    // Nor may one checked out: the pool listens only to idle clients, and a
    // connection's error can come with no query to fail. A transaction is handed
    // its connection a tick after the pool takes it back, and the read that
    // ended the last query may carry a FATAL too (an administrator's terminate,
    // a shutdown); PostgreSQL also sends its 57P01 as a query error, then closes
    // the socket. Every client carries a listener for its whole life; a broken one
    // is unqueryable, so its next query fails and the pool discards it.
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  async query<Row>(sql: string, params: unknown[] = []): Promise<QueryResult<Row>> {
    const result = await this.pool.query(this.statement(sql, params));
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
  }

  /** The query as node-postgres takes it, named when it has parameters (a text without any is sent as a simple query). */
  private statement(text: string, values: unknown[]): pg.QueryConfig {
    const name = values.length > 0 ? this.names?.nameFor(text) : undefined;
    return name ? { name, text, values } : { text, values };
  }

  async exec(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // A socket reset or a server shutdown message between two statements: the
    // pending (or next) query fails with it, and the client is not reused.
    let broken = false;
    const onError = () => {
      broken = true;
    };
    client.on('error', onError);
    const tx: Queryable = {
      query: async <Row>(sql: string, params: unknown[] = []) => {
        const result = await client.query(this.statement(sql, params));
        return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
      },
      exec: async (sql: string) => {
        await client.query(sql);
      },
    };
    try {
      await client.query('BEGIN');
      const value = await work(tx);
      await client.query('COMMIT');
      return value;
    } catch (error) {
      if (!broken) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
      }
      throw error;
    } finally {
      client.off('error', onError);
      // A broken client is discarded, never handed to the next caller.
      client.release(broken || undefined);
    }
  }

  async listen(channel: string, onMessage: Listener): Promise<() => Promise<void>> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      const client = await this.listener();
      await client.query(`LISTEN ${quoteIdent(channel)}`);
    }
    set.add(onMessage);
    return async () => {
      set!.delete(onMessage);
    };
  }

  private listener(): Promise<pg.Client> {
    if (this.listenClient) return Promise.resolve(this.listenClient);
    this.connectingListener ??= this.connectListener().finally(() => {
      this.connectingListener = null;
    });
    return this.connectingListener;
  }

  private async connectListener(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    client.on('notification', (msg) => {
      for (const listener of this.listeners.get(msg.channel) ?? []) listener(msg.payload ?? '');
    });
    client.on('error', () => this.dropListener(client));
    client.on('end', () => this.dropListener(client));
    await client.connect();
    for (const channel of this.listeners.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
    this.listenClient = client;
    return client;
  }

  /** Notifications are only hints (polling is the backstop), so reconnect quietly. */
  private dropListener(client: pg.Client): void {
    if (this.listenClient !== client) return;
    this.listenClient = null;
    client.end().catch(() => undefined);
    const retry = () => {
      if (this.closed || this.listenClient || this.listeners.size === 0) return;
      this.listener().catch(() => setTimeout(retry, 1000).unref());
    };
    setTimeout(retry, 200).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.listenClient;
    this.listenClient = null;
    await client?.end().catch(() => undefined);
    await this.pool.end();
  }
}

function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}
