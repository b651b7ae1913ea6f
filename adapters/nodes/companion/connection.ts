// The companion's side of GET /v1/nodes/connect (docs/node-companion.md): the hub
// sends a challenge, the node answers with a hello holding its signed proof
// (and its enrollment token while it is not paired), the hub admits it (or
// closes with a 44xx code), and then invocations flow. Any disconnect is
// followed by a reconnect with backoff, except a permanent refusal, which ends
// the run so that a person can act.
import WebSocket from 'ws';
import type { NodeCompanionFrame, NodeExecutionPlan, NodeHubFrame } from '../../../generated/protocol-schemas.js';
import { NodeHubFrame as validateHubFrame } from '../../../generated/protocol-validators.js';
import type { NodeCatalog, NodeState } from '../../../generated/schemas.js';
import { PERMANENT_CLOSE_CODES } from '../../../core/surfaces/nodes/wire/close-codes.js';
import { HEARTBEAT_MS, MAX_FRAME_BYTES, MAX_PROTOCOL, MIN_PROTOCOL } from '../../../core/surfaces/nodes/wire/limits.js';
import { signProof } from '../../../core/surfaces/nodes/wire/node-identity.js';
import { Backoff } from './backoff.js';
import type { NodeIdentity } from './home.js';

export interface Admission {
  state: NodeState;
  allowedCommands: string[];
  approvedCatalogHash: string | null;
}

export interface ConnectionOptions {
  url: string;
  identity: NodeIdentity;
  catalog: NodeCatalog;
  catalogHash: string;
  clientVersion: string;
  displayName?: string;
  /** The enrollment token to present now (only until the node is paired). */
  token(): string | undefined;
  onAdmission(admission: Admission): void;
  /** The connection is usable for answers (a send function), or gone (null). */
  onLink(send: ((frame: NodeCompanionFrame) => void) | null): void;
  /** A plan to run, with the values of its secret environment (never written anywhere). */
  onInvoke(plan: NodeExecutionPlan, secrets: Record<string, string>): void;
  onCancel(invocationId: string): void;
  log(line: string): void;
  heartbeatMs?: number;
  backoff?: Backoff;
}

/** How the run ended: stopped by the companion, or refused for good by the hub. */
export type ConnectionEnd = { kind: 'stopped' } | { kind: 'refused'; code: number; reason: string };

export class HubConnection {
  private socket: WebSocket | null = null;
  private stopped = false;
  private wake: (() => void) | null = null;
  private readonly backoff: Backoff;
  private send: ((frame: NodeCompanionFrame) => void) | null = null;

  constructor(private options: ConnectionOptions) {
    this.backoff = options.backoff ?? new Backoff();
  }

  /** Connects, and reconnects after every disconnect, until stopped or refused for good. */
  async run(): Promise<ConnectionEnd> {
    while (!this.stopped) {
      const { code, reason } = await this.connectOnce();
      if (this.stopped) break;
      if (PERMANENT_CLOSE_CODES.has(code)) return { kind: 'refused', code, reason };
      const wait = this.backoff.next();
      this.options.log(`disconnected (${code}${reason ? `: ${reason}` : ''}); reconnecting in ${(wait / 1000).toFixed(1)} s`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    return { kind: 'stopped' };
  }

  /**
   * The catalog changed (a reloaded config): the hub is told with a `catalog`
   * frame and asks for a new hello (1012), whose proof covers the new catalog.
   */
  changeCatalog(catalog: NodeCatalog, catalogHash: string): void {
    this.options = { ...this.options, catalog, catalogHash };
    if (this.send) this.send({ type: 'catalog', catalog, catalog_hash: catalogHash });
    else this.socket?.close(1000, 'the catalog changed');
  }

  /** Closes the connection (1000) and ends run(); answers already sent stay sent. */
  stop(): void {
    this.stopped = true;
    this.wake?.();
    this.socket?.close(1000, 'the companion stops');
  }

  private connectOnce(): Promise<{ code: number; reason: string }> {
    const { options } = this;
    const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    return new Promise((resolve) => {
      const socket = new WebSocket(options.url, { maxPayload: MAX_FRAME_BYTES, handshakeTimeout: 10_000 });
      this.socket = socket;
      let admitted = false;
      let lastHeard = Date.now();
      const send = (frame: NodeCompanionFrame) => {
        if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
      };
      const heartbeat = setInterval(() => {
        // Three heartbeats without a word from the hub: the connection is gone, whatever TCP says.
        if (Date.now() - lastHeard > 3 * heartbeatMs) socket.terminate();
        else if (admitted) send({ type: 'heartbeat' });
      }, heartbeatMs);
      socket.on('open', () => options.log(`connected to ${options.url}`));
      socket.on('message', (data, isBinary) => {
        lastHeard = Date.now();
        const frame = parseFrame(data, isBinary);
        if (!frame) {
          options.log('ignored a frame that is not one of the protocol');
          return;
        }
        switch (frame.type) {
          case 'challenge':
            send(this.hello(frame.nonce));
            return;
          case 'admitted':
          case 'approved':
            if (frame.type === 'admitted' && frame.node_id !== options.identity.nodeId) {
              options.log('the hub admitted another node id; reconnecting');
              socket.close(1000);
              return;
            }
            if (!admitted) {
              admitted = true;
              this.backoff.reset();
              this.send = send;
              options.onLink(send);
            }
            options.onAdmission({ state: frame.state, allowedCommands: frame.allowed_commands, approvedCatalogHash: frame.approved_catalog_hash });
            return;
          case 'heartbeat':
            return;
          case 'invoke':
            if (admitted) options.onInvoke(frame.plan, frame.secrets ?? {});
            return;
          case 'invoke.cancel':
            if (admitted) options.onCancel(frame.invocation_id);
            return;
          default:
            return assertNever(frame);
        }
      });
      socket.on('error', (error) => options.log(`connection error: ${error.message}`));
      socket.on('close', (code, reason) => {
        clearInterval(heartbeat);
        if (admitted) options.onLink(null);
        if (this.send === send) this.send = null;
        if (this.socket === socket) this.socket = null;
        resolve({ code, reason: reason.toString('utf8') });
      });
    });
  }

  private hello(nonce: string): NodeCompanionFrame {
    const { identity, catalog, catalogHash, clientVersion, displayName } = this.options;
    const proof = signProof(identity.privateKeyPem, {
      node_id: identity.nodeId,
      public_key: identity.publicKey,
      nonce,
      min_protocol: MIN_PROTOCOL,
      max_protocol: MAX_PROTOCOL,
      client_version: clientVersion.slice(0, 64),
      platform: process.platform,
      architecture: process.arch,
      ...(displayName ? { display_name: displayName } : {}),
      catalog,
      catalog_hash: catalogHash,
    });
    const token = this.options.token();
    return { type: 'hello', proof, ...(token ? { enrollment_token: token } : {}) };
  }
}

function parseFrame(data: WebSocket.RawData, isBinary: boolean): NodeHubFrame | null {
  if (isBinary) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'));
  } catch {
    return null;
  }
  return validateHubFrame(value) ? (value as NodeHubFrame) : null;
}

function assertNever(value: never): never {
  throw new Error(`unexpected frame ${JSON.stringify(value)}`);
}
