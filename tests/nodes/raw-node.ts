// A companion reduced to its socket: a `ws` client that reads the hub's
// frames in order, sends what a test tells it (valid or not) and reports how
// the hub closed the connection. Nothing here checks what the hub sends: the
// tests do.
import WebSocket from 'ws';
import type { NodeChallengeFrame, NodeHubFrame } from '../../generated/protocol-schemas.js';

export interface Closed {
  code: number;
  reason: string;
}

export class RawNode {
  private readonly frames: NodeHubFrame[] = [];
  /** Every frame's type, in the order it came (read or not). */
  readonly order: string[] = [];
  private waiting: (() => void) | null = null;
  /** How the connection ended (the hub's close code, or 1006 when it dropped). */
  readonly closed: Promise<Closed>;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as NodeHubFrame;
      this.frames.push(frame);
      this.order.push(frame.type);
      this.waiting?.();
    });
    ws.on('error', () => undefined);
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    this.closed.then(() => this.waiting?.());
  }

  static async connect(url: string): Promise<RawNode> {
    const ws = new WebSocket(url, { maxPayload: 2 * 1024 * 1024 });
    const node = new RawNode(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return node;
  }

  /** A connection and its challenge. */
  static async challenged(url: string): Promise<{ node: RawNode; challenge: NodeChallengeFrame }> {
    const node = await RawNode.connect(url);
    const challenge = await node.next('challenge');
    return { node, challenge };
  }

  /** The next frame of `type` (heartbeats and other frames before it are skipped); throws when the socket closes first. */
  async next<T extends NodeHubFrame['type']>(type: T): Promise<Extract<NodeHubFrame, { type: T }>> {
    for (;;) {
      const index = this.frames.findIndex((frame) => frame.type === type);
      if (index >= 0) return this.frames.splice(index, 1)[0] as Extract<NodeHubFrame, { type: T }>;
      if (this.ws.readyState === WebSocket.CLOSED) {
        const closed = await this.closed;
        throw new Error(`the hub closed the connection (${closed.code} ${closed.reason}) before a ${type} frame`);
      }
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = null;
    }
  }

  /** Frames received and not read yet, of `type`. */
  pending(type: NodeHubFrame['type']): NodeHubFrame[] {
    return this.frames.filter((frame) => frame.type === type);
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame));
  }

  /** Closes from the node's side and waits for the end. */
  async close(): Promise<Closed> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(1000, 'bye');
    return this.closed;
  }
}
