// Waiting for a response to settle (terminal or waiting for someone), for callers
// that answer synchronously. A parked response is not settled: nobody is asked
// anything yet, so the caller keeps waiting for the party's answer. The run itself never depends on anyone waiting.
//
// A response this process runs is awaited in memory: the answer is the row its
// run committed last, and no read is made. Anything else is read, again at
// each of its journal's wake-ups (and at each poll).
import { eventsKey } from '../journal/wakeups.js';
import type { Kernel } from '../kernel.js';
import { requireResponse, type ResponseRow } from './responses.js';
import { isSettled as isSettledStatus } from '../response-status.js';

const isSettled = (row: ResponseRow) => isSettledStatus(row.status);

/** The run's outcome, or undefined when the deadline or the signal comes first. */
async function localOutcome(run: Promise<ResponseRow | null>, deadline: number, signal?: AbortSignal): Promise<ResponseRow | null | undefined> {
  if (signal?.aborted) return undefined;
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => undefined as void;
  const stop = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, deadline - Date.now()), undefined);
    onAbort = () => resolve(undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([run, stop]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

export async function waitUntilSettled(kernel: Kernel, projectId: string, responseId: string, timeoutMs: number, signal?: AbortSignal): Promise<ResponseRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = kernel.localRuns?.outcome(responseId);
    if (run) {
      const row = await localOutcome(run, deadline, signal);
      if (row && row.project_id === projectId && isSettled(row)) return row;
      // Out of time, or the run stopped without settling (handed back): the database says how it stands.
    }
    const woken = kernel.wakeups.arm(eventsKey(responseId), Math.min(kernel.config.pollIntervalMs, Math.max(0, deadline - Date.now())), signal);
    const row = await requireResponse(kernel.db, projectId, responseId);
    if (isSettled(row) || Date.now() >= deadline || signal?.aborted) {
      woken.cancel();
      return row;
    }
    // Picked up here meanwhile: await the run instead.
    if (kernel.localRuns?.outcome(responseId)) {
      woken.cancel();
      continue;
    }
    await woken.promise;
  }
}
