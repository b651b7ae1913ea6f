// How a run meets its parked calls (core/tools/parked-calls.ts). Before it runs
// anything, it ends the parked calls that are due — answered while it was not
// looking, or past their deadline — under its lease. When it parks the response
// with a parked call open, it takes the response's row lock first and looks
// again: an answering command holds that lock too, so its answer either came
// before (and the run goes on with it) or finds the response waiting (and hands
// it back to the workers). An answer can never slip in between and be left
// unseen while the response waits for it.
import { assertLease } from '../responses/lease.js';
import { appendOutputItems } from '../responses/output-items.js';
import type { ResponseRow } from '../responses/responses.js';
import { changeStatus, type SuspendedStatus } from '../responses/status-writer.js';
import { completeDueParkedCalls, hasDueParkedCalls } from '../tools/parked-calls.js';
import type { ToolCallRow } from '../tools/tool-calls.js';
import type { RunContext } from './run-context.js';

const hasParked = (open: readonly Pick<ToolCallRow, 'status'>[]) => open.some((c) => c.status === 'parked');

/** Ends the due parked calls among `open`, each output committed and journaled; how many. */
export async function endDueParkedCalls(ctx: RunContext, open: readonly Pick<ToolCallRow, 'status'>[]): Promise<number> {
  if (!hasParked(open)) return 0;
  return ctx.kernel.db.transaction(async (tx) => {
    await assertLease(tx, ctx.writer);
    const items = await completeDueParkedCalls(tx, ctx.writer.responseId);
    await appendOutputItems(tx, ctx.writer, items);
    return items.length;
  });
}

/** Parks the response in `waiting` (a wait, or parked); null when a parked call among `open` became due meanwhile (run on instead). */
export async function parkResponse(ctx: RunContext, waiting: SuspendedStatus, open: readonly Pick<ToolCallRow, 'status'>[]): Promise<ResponseRow | null> {
  const { db } = ctx.kernel;
  if (!hasParked(open)) return db.transaction((tx) => changeStatus(tx, ctx.writer, { to: waiting }));
  return db.transaction(async (tx) => {
    await assertLease(tx, ctx.writer);
    if (await hasDueParkedCalls(tx, ctx.writer.responseId)) return null;
    return changeStatus(tx, ctx.writer, { to: waiting });
  });
}
