// The ledger as the gateway's process moves it: dispatching plans to the nodes
// it holds, recording what each node answered (and answering the call in the
// same transaction), finding what to stop, and sweeping what was never sent
// (or can no longer be reported).
import type { NodeExecutionPlan, NodeInvokeResultFrame } from '../../../generated/protocol-schemas.js';
import { TERMINAL_STATUSES } from '../../response-status.js';
import { notifySignal } from '../../signals/signals.js';
import type { Db, Queryable } from '../../store/db.js';
import { endInvocation, lockInvocation, type InvocationEnding } from './invocation-endings.js';
import { ENDED_STATES, SENT_STATES } from './invocation-states.js';
import { REPORT_GRACE_MS } from './node-calls-port.js';
import { NODE_SIGNALS, nodeConnectionLease } from './node-gateway-port.js';
import type { InvocationRow } from './node-views.js';

const RESPONSE_ENDED = `EXISTS (SELECT 1 FROM responses r WHERE r.id = i.response_id AND r.status = ANY('{${TERMINAL_STATUSES.join(',')}}'::text[]))`;
/**
 * The claiming process holds the node's connection lease now (its holder is the
 * dispatch holder): a process whose lease ran out while its claim was on the
 * way dispatches nothing, so no plan is marked sent to a socket that is gone.
 */
const HOLDS_CONNECTION = `EXISTS (SELECT 1 FROM cluster_leases l WHERE l.key = '${nodeConnectionLease('')}' || i.node_id AND l.holder = $2 AND l.expires_at > now())`;
/** The command is still approved: a plan prepared before the operator withdrew it is not sent. */
const STILL_APPROVED = `EXISTS (SELECT 1 FROM nodes n WHERE n.id = i.node_id AND n.revoked_at IS NULL AND i.command = ANY(n.allowed_commands))`;
const SWEEP_BATCH = 100;

export async function claimDispatch(db: Db, nodeIds: readonly string[], holder: string, options: { resend: boolean }): Promise<NodeExecutionPlan[]> {
  if (nodeIds.length === 0) return [];
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ plan: NodeExecutionPlan }>(
      `UPDATE node_invocations i SET state = 'dispatched', dispatch_holder = $2, dispatched_at = now(), updated_at = now()
       WHERE i.node_id = ANY($1::text[]) AND i.state = 'prepared' AND i.expires_at > now() AND i.cancel_requested_at IS NULL AND NOT ${RESPONSE_ENDED}
         AND ${STILL_APPROVED} AND ${HOLDS_CONNECTION}
       RETURNING i.plan, i.id`,
      [nodeIds, holder],
    );
    const plans = rows.map((r) => r.plan);
    if (!options.resend) return plans;
    const { rows: sent } = await tx.query<{ plan: NodeExecutionPlan }>(
      `UPDATE node_invocations i SET dispatch_holder = $2, updated_at = now()
       WHERE i.node_id = ANY($1::text[]) AND i.state = ANY($3::text[]) AND NOT (i.id = ANY($4::text[])) AND ${HOLDS_CONNECTION}
       RETURNING i.plan`,
      [nodeIds, holder, SENT_STATES, plans.map((p) => p.invocation_id)],
    );
    return [...sent.map((r) => r.plan), ...plans].sort((a, b) => a.invocation_id.localeCompare(b.invocation_id));
  });
}

export async function markAccepted(db: Queryable, nodeId: string, invocationId: string): Promise<void> {
  await db.query(
    `UPDATE node_invocations SET state = 'running', accepted_at = coalesce(accepted_at, now()), updated_at = now()
     WHERE id = $1 AND node_id = $2 AND state IN ('dispatched', 'accepted')`,
    [invocationId, nodeId],
  );
}

export async function recordResult(db: Db, nodeId: string, frame: NodeInvokeResultFrame): Promise<'recorded' | 'repeated' | 'refused'> {
  return db.transaction(async (tx) => {
    const row = await lockInvocation(tx, frame.invocation_id);
    if (!row || row.node_id !== nodeId || row.plan_hash !== frame.plan_hash) return 'refused';
    const ended = await endInvocation(tx, row, {
      state: frame.state,
      result: frame.result ?? null,
      failureCode: frame.failure?.code ?? (frame.state === 'failed' && !frame.result ? 'EXECUTION_FAILED' : null),
      failureMessage: frame.failure?.message ?? null,
      terminationConfirmed: frame.termination_confirmed ?? null,
    });
    // endInvocation answers the row as it was when the invocation had already ended.
    return ended === row ? 'repeated' : 'recorded';
  });
}

export async function invocationsToCancel(db: Queryable, nodeIds: readonly string[]): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT i.id FROM node_invocations i
     WHERE i.node_id = ANY($1::text[]) AND i.state = ANY($2::text[]) AND (i.cancel_requested_at IS NOT NULL OR ${RESPONSE_ENDED})
     ORDER BY i.id`,
    [nodeIds, SENT_STATES],
  );
  return rows.map((r) => r.id);
}

/**
 * When a sent invocation's outcome can no longer come: the node checks a plan's
 * expiry (with the clock skew) before it starts and runs it for its timeout at
 * most, so past this the node never reported — its outcome is unknown, never retried.
 */
const SILENT_AFTER = `i.expires_at + make_interval(secs => (i.plan->>'timeout_seconds')::int + ${REPORT_GRACE_MS / 1000}) <= now()`;

function sweepEnding(row: InvocationRow, expired: boolean): InvocationEnding {
  if (row.state !== 'prepared') {
    return { state: 'unknown', failureCode: 'INVOCATION_UNKNOWN', failureMessage: 'The node did not report how the command ended; it is not run again.' };
  }
  return expired ? { state: 'expired', failureCode: 'NODE_UNAVAILABLE' } : { state: 'canceled', failureCode: 'INVOCATION_CANCELED' };
}

/**
 * Ends what was never sent: expired (NODE_UNAVAILABLE), or cancelled, its
 * response ended (INVOCATION_CANCELED); and what was sent but can no longer be
 * reported (INVOCATION_UNKNOWN), so a node gone for good does not hold its calls open.
 */
export async function sweepLedger(db: Db): Promise<number> {
  let total = 0;
  for (;;) {
    const ended = await db.transaction(async (tx) => {
      const { rows } = await tx.query<InvocationRow & { expired: boolean }>(
        `SELECT i.*, i.expires_at <= now() AS expired FROM node_invocations i
         WHERE (i.state = 'prepared' AND (i.expires_at <= now() OR i.cancel_requested_at IS NOT NULL OR ${RESPONSE_ENDED}))
            OR (i.state = ANY($1::text[]) AND ${SILENT_AFTER})
         ORDER BY i.id LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED`,
        [SENT_STATES],
      );
      for (const { expired, ...row } of rows) await endInvocation(tx, row, sweepEnding(row, expired));
      return rows.length;
    });
    total += ended;
    if (ended < SWEEP_BATCH) return total;
  }
}

/** Not yet sent: canceled now, never sent; sent: the node's holder is told to stop it. An ended one is left as it is. */
export async function cancelInvocation(db: Db, projectId: string, id: string): Promise<InvocationRow | null> {
  return db.transaction(async (tx) => {
    const row = await lockInvocation(tx, id);
    if (!row || row.project_id !== projectId) return null;
    if (row.state === 'prepared') return endInvocation(tx, row, { state: 'canceled', failureCode: 'INVOCATION_CANCELED' });
    if (!(SENT_STATES as readonly string[]).includes(row.state)) return row;
    const { rows } = await tx.query<InvocationRow>(
      'UPDATE node_invocations SET cancel_requested_at = coalesce(cancel_requested_at, now()), updated_at = now() WHERE id = $1 RETURNING *',
      [row.id],
    );
    await notifySignal(tx, NODE_SIGNALS.work, row.node_id);
    return rows[0];
  });
}

/** The most ended invocations one purge statement removes: the sweep never holds the table long. */
const PURGE_BATCH = 500;

/** Removes ended invocations older than the retention, in batches; open ones are never touched. Answers how many. */
export async function purgeLedger(db: Db, retentionHours: number): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await db.query(
      `DELETE FROM node_invocations WHERE id IN (SELECT id FROM node_invocations
         WHERE state = ANY($1::text[]) AND completed_at < now() - make_interval(hours => $2) ORDER BY completed_at LIMIT ${PURGE_BATCH})`,
      [ENDED_STATES, retentionHours],
    );
    total += rowCount;
    if (rowCount < PURGE_BATCH) return total;
  }
}
