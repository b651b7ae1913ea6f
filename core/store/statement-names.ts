// Names for prepared statements. node-postgres sends every query unnamed, so
// PostgreSQL parses and plans it at each call; a named one is parsed once per
// connection and its plan cached (after five calls PostgreSQL may keep a
// generic plan). Palai's statements are templates, so their texts repeat:
// naming them takes planning off the hot path (about a third of the database's
// time in a one-step response).
import { createHash } from 'node:crypto';

/** How many distinct texts get a name; any further text goes unnamed (each connection keeps what it prepared). */
const MAX_NAMED = 300;
/**
 * A statement whose result columns follow the table's (`SELECT *`, `RETURNING
 * *`, `t.*`) stays unnamed: after a migration adds a column, its cached plan
 * would fail with "cached plan must not change result type" in the processes of
 * the old release still running beside the new one.
 */
const STAR_RESULT = /(?:select|returning|,)\s*(?:distinct\s+)?(?:\w+\.)?\*/i;

export class StatementNames {
  private readonly names = new Map<string, string | null>();

  /** The statement's name, or undefined to send it unnamed. */
  nameFor(sql: string): string | undefined {
    let name = this.names.get(sql);
    if (name === undefined) {
      if (this.names.size >= MAX_NAMED) return undefined;
      name = STAR_RESULT.test(sql) ? null : `palai_${createHash('sha1').update(sql).digest('base64url').slice(0, 20)}`;
      this.names.set(sql, name);
    }
    return name ?? undefined;
  }
}
