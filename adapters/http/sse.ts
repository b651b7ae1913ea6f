// Server-sent events from the journal: each event's SSE `id` is its sequence
// number, so a client resumes with `Last-Event-ID` or `starting_after`.
import type { Request, Response } from 'express';
import { once } from 'node:events';
import { followEvents } from '../../core/journal/journal.js';
import type { Kernel } from '../../core/kernel.js';

const KEEPALIVE_MS = 15_000;

export async function streamResponseEvents(kernel: Kernel, res: Response, responseId: string, after: number): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const closed = new AbortController();
  res.on('close', () => closed.abort());
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  kernel.metrics.activeStreams.inc();
  try {
    for await (const event of followEvents(kernel.db, kernel.wakeups, responseId, { after, signal: closed.signal })) {
      const frame = `id: ${event.sequence_number}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
      if (!res.write(frame)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      if (closed.signal.aborted) break;
    }
  } finally {
    kernel.metrics.activeStreams.dec();
    clearInterval(keepalive);
    res.end();
  }
}

/** The sequence to resume after: `starting_after` wins over `Last-Event-ID`; -1 replays everything. */
export function resumePoint(req: Request, startingAfter: number | undefined): number {
  if (startingAfter !== undefined) return startingAfter;
  const header = Number(req.get('last-event-id'));
  return Number.isInteger(header) && header >= 0 ? header : -1;
}
