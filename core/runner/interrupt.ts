// Why a run was stopped from outside. The worker aborts the run's signal with
// one of these; the run decides what that means for the response.
export type InterruptReason = 'cancel' | 'deadline' | 'shutdown' | 'lease_lost';

export class RunInterrupted extends Error {
  constructor(readonly reason: InterruptReason) {
    super(`run interrupted: ${reason}`);
    this.name = 'RunInterrupted';
  }
}

export function interruptReason(signal: AbortSignal): InterruptReason | null {
  if (!signal.aborted) return null;
  return signal.reason instanceof RunInterrupted ? signal.reason.reason : 'shutdown';
}
