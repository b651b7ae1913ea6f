// A call's progress notifications, committed on its checkpoint beside `sent`, so
// the tool_calls row shows how far the server got (and a later run knows it).
// Writes never pile up: while one commits, later notifications replace each
// other, and only the newest is written next.
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCallContext } from '../../../core/tools/tool-port.js';

export interface SentCheckpoint {
  /** The tools/call went out: a later run must not send it again unless the tool is idempotent or read-only. */
  sent: true;
  /** The run of the call that sent it. */
  attempt: number;
  progress?: { progress: number; total?: number; message?: string };
}

export const isSent = (value: unknown): value is SentCheckpoint => typeof value === 'object' && value !== null && (value as SentCheckpoint).sent === true;

export class ProgressCheckpoints {
  private latest: SentCheckpoint['progress'] | null = null;
  private written: SentCheckpoint['progress'] | null = null;
  private writing: Promise<void> | null = null;
  private stopped = false;
  /** How many notifications arrived. */
  count = 0;

  constructor(
    private readonly context: ToolCallContext,
    private readonly base: SentCheckpoint,
  ) {}

  record(progress: Progress): void {
    this.count++;
    this.latest = {
      progress: progress.progress,
      ...(progress.total !== undefined ? { total: progress.total } : {}),
      ...(progress.message !== undefined ? { message: progress.message } : {}),
    };
    if (!this.writing && !this.stopped) this.writing = this.drain();
  }

  private async drain(): Promise<void> {
    while (this.latest !== this.written && !this.stopped) {
      const next = this.latest;
      try {
        await this.context.saveCheckpoint({ ...this.base, progress: next ?? undefined } satisfies SentCheckpoint);
      } catch {
        // The run lost its lease or ended: progress is not worth more than the call.
        this.stopped = true;
      }
      this.written = next;
    }
    this.writing = null;
  }

  /** Waits until the newest progress is written, then stops writing: the call's output is committed next. */
  async settle(): Promise<void> {
    await this.writing;
    this.stopped = true;
  }
}
