// One HTTP request's side of the Streamable HTTP transport. Palai serves every
// POST with a fresh SDK Server connected to one of these, so nothing about a
// session outlives the request in memory: the answer goes back as one JSON body,
// or as an SSE stream whose event ids are journal positions (see event-ids.ts)
// so that a host that lost it resumes on any process.
import type { Response } from 'express';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** An SSE comment this often keeps proxies and idle timeouts from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

/** How long a host waits before resuming a dropped stream (sent with the priming event). */
const RETRY_MS = 500;

export type AnswerMode = 'json' | 'sse';

/** Resumable streams (priming events without data) exist from this protocol version on. */
export const PRIMING_FROM_VERSION = '2025-11-25';

export class RequestStream implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  readonly sessionId: string | undefined;
  private opened = false;
  private ended = false;
  private keepAlive: NodeJS.Timeout | null = null;

  constructor(
    private readonly res: Response,
    private readonly mode: AnswerMode,
    sessionId: string | undefined,
  ) {
    this.sessionId = sessionId;
    // The host hung up: the handlers stop following (the run itself goes on, and can be resumed).
    res.on('close', () => void this.close());
  }

  async start(): Promise<void> {}

  /** Hands the request's one message to the server. */
  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Whether messages other than the answer can reach the host (SSE). */
  get streaming(): boolean {
    return this.mode === 'sse';
  }

  /**
   * An SSE event with a journal position as its id; `null` writes the priming
   * event (an id and no data), which gives the host a cursor before anything else.
   */
  event(message: JSONRPCMessage | null, id?: string): void {
    if (this.ended || this.mode !== 'sse') return;
    this.open();
    const head = id !== undefined ? `id: ${id}\n` : '';
    this.res.write(message === null ? `${head}retry: ${RETRY_MS}\ndata: \n\n` : `event: message\n${head}data: ${JSON.stringify(message)}\n\n`);
  }

  /** Opens the SSE stream with a comment: for a host too old for a priming event. */
  hold(): void {
    if (this.ended || this.mode !== 'sse') return;
    this.open();
    this.res.write(': open\n\n');
  }

  /** The SDK's sends: the answer ends the request; a notification rides the stream (dropped in JSON mode). */
  async send(message: JSONRPCMessage): Promise<void> {
    if (this.ended) return;
    const answer = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    if (this.mode === 'json') {
      if (!answer) return;
      this.res.status(200).json(message);
      this.finish();
      return;
    }
    this.event(message);
    if (answer) {
      this.res.end();
      this.finish();
    }
  }

  async close(): Promise<void> {
    if (this.ended) return;
    if (this.opened) this.res.end();
    this.finish();
  }

  private open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream');
    this.res.setHeader('Cache-Control', 'no-cache, no-transform');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
    this.keepAlive = setInterval(() => this.res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  private finish(): void {
    this.ended = true;
    if (this.keepAlive) clearInterval(this.keepAlive);
    this.onclose?.();
  }
}
