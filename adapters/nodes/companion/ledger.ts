// The companion's own invocation ledger: one JSON file per idempotency key in
// <home>/ledger, replaced atomically. A record is written `running` before the
// command starts, so whatever happens next, a re-sent plan is never run again:
//
//   (none) ──begin──▶ running ──finish──▶ succeeded | failed | canceled
//                        │
//                        └──(found at start: the companion died)──▶ unknown
//
// A re-send with the recorded plan hash is answered from the record; with
// another plan hash it is an IDEMPOTENCY_CONFLICT.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeExecutionPlan, NodeFailure, NodeInvocationOutcome, NodeInvokeResultFrame } from '../../../generated/protocol-schemas.js';
import type { NodeCommandResult } from '../../../generated/schemas.js';
import { writeFileAtomic } from './atomic-file.js';

export type LedgerState = 'running' | NodeInvocationOutcome;

/** Which state each may move to; an ended record never changes. */
export const LEDGER_TRANSITIONS: Readonly<Record<LedgerState, readonly LedgerState[]>> = {
  running: ['succeeded', 'failed', 'canceled', 'unknown'],
  succeeded: [],
  failed: [],
  canceled: [],
  unknown: [],
};

export interface LedgerRecord {
  idempotency_key: string;
  invocation_id: string;
  plan_hash: string;
  command: string;
  state: LedgerState;
  started_at: string;
  /** The command's process group, once spawned: a companion that died leaves it to the operator (a pid may be reused, so it is never signalled later). */
  pid?: number;
  ended_at?: string;
  result?: NodeCommandResult;
  failure?: NodeFailure;
  termination_confirmed?: boolean;
}

export interface LedgerOutcome {
  state: NodeInvocationOutcome;
  result?: NodeCommandResult;
  failure?: NodeFailure;
  termination_confirmed?: boolean;
}

/** Ended records older than this are removed (a plan lives minutes; a re-send comes within its command's run); palai-node.yaml `ledger.retention_hours`. */
export const LEDGER_RETENTION_MS = 7 * 24 * 3600_000;
/** The most records, and bytes of them, the ledger keeps: past either, the oldest ended records go. Open ones are never removed. */
export const MAX_LEDGER_RECORDS = 256;
export const MAX_LEDGER_BYTES = 32 * 1024 * 1024;

export interface LedgerBounds {
  retentionMs: number;
  maxRecords: number;
  maxBytes: number;
}

const DEFAULT_BOUNDS: LedgerBounds = { retentionMs: LEDGER_RETENTION_MS, maxRecords: MAX_LEDGER_RECORDS, maxBytes: MAX_LEDGER_BYTES };

const fileOf = (key: string): string => `${createHash('sha256').update(key).digest('hex')}.json`;

export class Ledger {
  private readonly records = new Map<string, LedgerRecord>();
  /** Each record's size on disk, for the byte bound. */
  private readonly sizes = new Map<string, number>();

  private constructor(
    private readonly dir: string,
    private readonly bounds: LedgerBounds,
  ) {}

  /**
   * Reads the ledger: a record still `running` was left by a companion that
   * died mid-command, so it becomes `unknown` (never run again); ended records
   * past retention are removed.
   */
  static open(dir: string, now = Date.now(), bounds: Partial<LedgerBounds> = {}): Ledger {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const ledger = new Ledger(dir, { ...DEFAULT_BOUNDS, ...bounds });
    for (const name of readdirSync(dir)) if (name.endsWith('.tmp')) rmSync(join(dir, name), { force: true });
    for (const [name, found] of readRecords(dir)) {
      let record = found;
      if (record.state === 'running') {
        record = ledger.write({
          ...record,
          state: 'unknown',
          ended_at: new Date(now).toISOString(),
          failure: { code: 'INVOCATION_UNKNOWN', message: 'the companion stopped while the command ran; its outcome is unknown and it is not run again' },
        });
      }
      ledger.records.set(record.idempotency_key, record);
      ledger.sizes.set(record.idempotency_key, Buffer.byteLength(`${JSON.stringify(record)}\n`, 'utf8'));
    }
    ledger.purge(now);
    return ledger;
  }

  /** Ended records past the retention, then the oldest ended ones while over a bound; answers how many went. */
  purge(now = Date.now()): number {
    const ended = [...this.records.values()].filter((r) => r.state !== 'running' && r.ended_at).sort((a, b) => a.ended_at!.localeCompare(b.ended_at!));
    let bytes = [...this.sizes.values()].reduce((sum, n) => sum + n, 0);
    let removed = 0;
    for (const record of ended) {
      const expired = Date.parse(record.ended_at!) < now - this.bounds.retentionMs;
      if (!expired && this.records.size <= this.bounds.maxRecords && bytes <= this.bounds.maxBytes) break;
      rmSync(join(this.dir, fileOf(record.idempotency_key)), { force: true });
      bytes -= this.sizes.get(record.idempotency_key) ?? 0;
      this.records.delete(record.idempotency_key);
      this.sizes.delete(record.idempotency_key);
      removed++;
    }
    return removed;
  }

  get(key: string): LedgerRecord | undefined {
    return this.records.get(key);
  }

  /** Written (and synced) before the command starts. */
  begin(plan: NodeExecutionPlan, now = new Date()): LedgerRecord {
    if (this.records.has(plan.idempotency_key)) throw new Error('the ledger already holds this idempotency key');
    const record = this.write({
      idempotency_key: plan.idempotency_key,
      invocation_id: plan.invocation_id,
      plan_hash: plan.plan_hash,
      command: plan.command,
      state: 'running',
      started_at: now.toISOString(),
    });
    this.records.set(record.idempotency_key, record);
    return record;
  }

  /** The running record learns its process group. */
  spawned(key: string, pid: number): void {
    const record = this.records.get(key);
    if (record?.state !== 'running') throw new Error('no running ledger record for this idempotency key');
    this.records.set(key, this.write({ ...record, pid }));
  }

  finish(key: string, outcome: LedgerOutcome, now = new Date()): LedgerRecord {
    const record = this.records.get(key);
    if (!record) throw new Error('no ledger record for this idempotency key');
    if (!LEDGER_TRANSITIONS[record.state].includes(outcome.state)) throw new Error(`a ${record.state} ledger record cannot become ${outcome.state}`);
    const ended = this.write({ ...record, ...outcome, ended_at: now.toISOString() });
    this.records.set(key, ended);
    // The record just ended is the newest: the bounds take older ones first.
    this.purge(now.getTime());
    return ended;
  }

  all(): LedgerRecord[] {
    return [...this.records.values()];
  }

  private write(record: LedgerRecord): LedgerRecord {
    const text = `${JSON.stringify(record)}\n`;
    writeFileAtomic(join(this.dir, fileOf(record.idempotency_key)), text);
    this.sizes.set(record.idempotency_key, Buffer.byteLength(text, 'utf8'));
    return record;
  }
}

/** The records in a ledger directory, by file name, as they are (for a reader beside a running companion). */
export function readRecords(dir: string): Map<string, LedgerRecord> {
  const records = new Map<string, LedgerRecord>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return records;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      records.set(name, JSON.parse(readFileSync(join(dir, name), 'utf8')) as LedgerRecord);
    } catch {
      // Atomic writes leave no torn file; a foreign file is not ours to read.
    }
  }
  return records;
}

/** The result frame that answers a re-send of an ended record. */
export function resultFrameOf(record: LedgerRecord): NodeInvokeResultFrame {
  if (record.state === 'running') throw new Error('a running record has no result yet');
  return {
    type: 'invoke.result',
    invocation_id: record.invocation_id,
    plan_hash: record.plan_hash,
    state: record.state,
    ...(record.result ? { result: record.result } : {}),
    ...(record.failure ? { failure: record.failure } : {}),
    ...(record.termination_confirmed === undefined ? {} : { termination_confirmed: record.termination_confirmed }),
  };
}

/** Counts by state, and the newest start, for `palai node status`. */
export function ledgerSummary(records: readonly LedgerRecord[]): { total: number; byState: Partial<Record<LedgerState, number>>; latest: string | null } {
  const byState: Partial<Record<LedgerState, number>> = {};
  let latest: string | null = null;
  for (const r of records) {
    byState[r.state] = (byState[r.state] ?? 0) + 1;
    if (!latest || r.started_at > latest) latest = r.started_at;
  }
  return { total: records.length, byState, latest };
}
