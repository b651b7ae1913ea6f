// The shutdown timeline of one process, shared by the worker and every surface:
//   draining — stop taking new work (no claims, no new connections, /readyz 503),
//              but let what runs finish;
//   closing  — the grace period is over: hand running responses back to other
//              processes and end open streams with a hint where to resume.
export class Lifecycle {
  private readonly drain = new AbortController();
  private readonly close = new AbortController();

  /** Aborted once shutdown begins. */
  get draining(): AbortSignal {
    return this.drain.signal;
  }

  /** Aborted once the grace period is over (always after `draining`). */
  get closing(): AbortSignal {
    return this.close.signal;
  }

  beginDrain(): void {
    this.drain.abort();
  }

  beginClose(): void {
    this.drain.abort();
    this.close.abort();
  }
}
