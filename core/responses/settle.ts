// Waiting for a response to settle (terminal or waiting for someone), for callers
// that answer synchronously. The run itself never depends on anyone waiting.
import { eventsKey } from '../journal/wakeups.js';
import type { Kernel } from '../kernel.js';
import { requireResponse, type ResponseRow } from './responses.js';
import { isTerminal, isWaiting } from './status.js';

export async function waitUntilSettled(kernel: Kernel, projectId: string, responseId: string, timeoutMs: number, signal?: AbortSignal): Promise<ResponseRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const woken = kernel.wakeups.arm(eventsKey(responseId), Math.min(kernel.config.pollIntervalMs, Math.max(0, deadline - Date.now())), signal);
    const row = await requireResponse(kernel.db, projectId, responseId);
    if (isTerminal(row.status) || isWaiting(row.status) || Date.now() >= deadline || signal?.aborted) {
      woken.cancel();
      return row;
    }
    await woken.promise;
  }
}
