// One node's WebSocket, from its challenge to its close. The frames of one
// socket are handled one after another (an `invoke.result` never overtakes the
// `invoke.accepted` before it); everything about the node's lease, dispatch
// and approvals is the gateway's (gateway.ts), told through ConnectionHost.
//
//   challenged ──valid hello──▶ admitting ──admitted──▶ admitted
//        │                          │                      │
//        └── expiry, bad frame ─────┴── refusal ───────────┴──▶ closed
//
// A refusal before admission writes nothing: the checks of hello.ts run first,
// then the store's admit, which refuses without writing.
import { randomBytes } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import type { NodeCatalogFrame, NodeCompanionFrame, NodeHelloFrame, NodeInvokeResultFrame } from '../../../generated/protocol-schemas.js';
import type { LeaseGrant } from '../../../core/leases/lease-port.js';
import type { Logger } from '../../../core/logger.js';
import { catalogFault, catalogHash } from '../../../core/surfaces/nodes/wire/catalog.js';
import { NODE_CLOSE } from '../../../core/surfaces/nodes/wire/close-codes.js';
import { MAX_PROTOCOL, MIN_PROTOCOL } from '../../../core/surfaces/nodes/wire/limits.js';
import { NodeAdmissionRefused, type NodeAdmission, type NodeGatewayPort } from '../../../core/surfaces/nodes/node-gateway-port.js';
import { closeWith, readFrame, sendFrame } from './frames.js';
import { helloRefusal, type OpenChallenge, type Refusal } from './hello.js';

export type ConnectionState = 'challenged' | 'admitting' | 'admitted' | 'closed';

/** What a connection needs of the gateway that holds it. */
export interface ConnectionHost {
  readonly port: NodeGatewayPort;
  readonly logger: Logger;
  readonly challengeTtlMs: number;
  /** The challenge is answered (or dropped): it no longer counts as open. */
  settledChallenge(connection: NodeConnection): void;
  admitted(connection: NodeConnection): void;
  refused(connection: NodeConnection, refusal: Refusal): void;
  heartbeat(connection: NodeConnection): Promise<void>;
  result(connection: NodeConnection, frame: NodeInvokeResultFrame): Promise<void>;
  closed(connection: NodeConnection, why: string): void;
}

export class NodeConnection {
  state: ConnectionState = 'challenged';
  readonly challenge: OpenChallenge;
  admission: NodeAdmission | null = null;
  /** This connection's tenure of its node's lease, while it holds it. */
  lease: LeaseGrant | null = null;
  /** When the last lease call that answered was made: the lease runs at least until a time to live after it. */
  leasedAt = 0;
  /** False once another connection (here or in another process) took the node over: the end of the connection is its to record. */
  recordsEnd = true;
  /** The tenure was ended (recorded, released): never twice. */
  ended = false;
  /** Its connection is recorded (connected), once it holds the lease. */
  onRecord = false;
  /** What was sent to the node before (and not finished) is still to be sent again on this connection. */
  needsResend = true;
  resendQueued = false;
  /** Another process was told a newer connection is here (once). */
  announced = false;
  /** The lease and heartbeat work in flight for it, so two never overlap. */
  upkeep: Promise<void> | null = null;
  /** Invocations sent on this connection and not yet answered (a cancel goes where its invoke went). */
  readonly sent = new Set<string>();
  readonly cancelsSent = new Set<string>();
  lastHeard = Date.now();
  lastBeat = Date.now();
  private chain: Promise<void> = Promise.resolve();
  private readonly expiry: NodeJS.Timeout;
  /** Why the hub closed it, when it did. */
  private closing: string | null = null;

  constructor(
    readonly ws: WebSocket,
    private readonly host: ConnectionHost,
  ) {
    const expiresAt = Date.now() + host.challengeTtlMs;
    this.challenge = { nonce: randomBytes(32).toString('base64url'), expiresAt };
    this.expiry = setTimeout(() => this.close(NODE_CLOSE.challengeExpired, 'no valid hello before the challenge expired'), host.challengeTtlMs);
    this.expiry.unref();
    ws.on('message', (data, isBinary) => {
      this.lastHeard = Date.now();
      // Whether the frame came on a live connection is decided now, not when its turn in the chain comes.
      const live = this.state !== 'closed' && ws.readyState === ws.OPEN;
      this.chain = this.chain.then(() => this.onFrame(data, isBinary, live)).catch((error: unknown) => this.failed(error));
    });
    ws.on('close', (code) => this.onClose(code));
    // A frame over maxPayload is closed 1009 by ws itself, which reports it here.
    ws.on('error', (error) => host.logger.debug({ err: error, node: this.nodeId }, 'a node connection failed'));
    sendFrame(ws, {
      type: 'challenge',
      nonce: this.challenge.nonce,
      min_protocol: MIN_PROTOCOL,
      max_protocol: MAX_PROTOCOL,
      expires_at: new Date(expiresAt).toISOString(),
    });
  }

  get nodeId(): string | null {
    return this.admission?.nodeId ?? null;
  }

  /** Resolves once the frames read so far are handled. */
  settled(): Promise<void> {
    return this.chain;
  }

  close(code: number, why: string): void {
    this.closing ??= why;
    closeWith(this.ws, code, why);
  }

  /** Ends a socket that went silent: no close handshake with a peer that is gone. */
  terminate(why: string): void {
    this.closing ??= why;
    this.ws.terminate();
  }

  private refuse(refusal: Refusal): void {
    this.host.refused(this, refusal);
    this.close(refusal.code, refusal.reason);
  }

  private async onFrame(data: RawData, isBinary: boolean, cameLive: boolean): Promise<void> {
    if (!cameLive) return;
    const read = await readFrame(data, isBinary);
    const stillOpen = this.state !== 'closed' && this.ws.readyState === this.ws.OPEN;
    if ('refusal' in read) return stillOpen ? this.refuse(read.refusal) : undefined;
    const frame: NodeCompanionFrame = read.frame;
    if (!stillOpen) {
      // What an admitted node said before it closed still counts: a stopping companion sends its last result, then closes.
      const nodeId = this.nodeId;
      if (nodeId === null || this.admission === null) return;
      if (frame.type === 'invoke.accepted') return this.host.port.accepted(nodeId, frame.invocation_id);
      if (frame.type === 'invoke.result') return this.host.result(this, frame);
      return;
    }
    if (this.state === 'challenged') {
      if (frame.type !== 'hello') return this.refuse({ code: NODE_CLOSE.invalidFrame, reason: 'the first frame must be a hello' });
      return this.hello(frame);
    }
    const nodeId = this.nodeId;
    if (this.state !== 'admitted' || nodeId === null) return;
    switch (frame.type) {
      case 'hello':
        return this.refuse({ code: NODE_CLOSE.invalidFrame, reason: 'a second hello on one connection' });
      case 'heartbeat':
        return this.host.heartbeat(this);
      case 'invoke.accepted':
        return this.host.port.accepted(nodeId, frame.invocation_id);
      case 'invoke.result':
        return this.host.result(this, frame);
      case 'catalog':
        return this.catalogChanged(frame);
      default: {
        const unexpected: never = frame;
        throw new Error(`unhandled frame ${JSON.stringify(unexpected)}`);
      }
    }
  }

  private async hello(frame: NodeHelloFrame): Promise<void> {
    clearTimeout(this.expiry);
    this.host.settledChallenge(this);
    const refusal = helloRefusal(frame, this.challenge);
    if (refusal) return this.refuse(refusal);
    this.state = 'admitting';
    let admission: NodeAdmission;
    try {
      admission = await this.host.port.admit(frame.proof, frame.enrollment_token);
    } catch (error) {
      if (error instanceof NodeAdmissionRefused) return this.refuse({ code: error.closeCode as Refusal['code'], reason: error.message });
      throw error;
    }
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.admission = admission;
    this.state = 'admitted';
    sendFrame(this.ws, {
      type: 'admitted',
      node_id: admission.nodeId,
      state: admission.state,
      allowed_commands: admission.usableCommands,
      approved_catalog_hash: admission.approvedCatalogHash,
    });
    this.host.admitted(this);
  }

  /**
   * A catalog is only admitted with a proof over it, so a node whose catalog
   * changed is asked to reconnect (NODE_CLOSE.reconnect, 1012: not a permanent refusal) and present
   * it in a new hello.
   */
  private catalogChanged(frame: NodeCatalogFrame): void {
    const tooLarge = catalogFault(frame.catalog);
    if (tooLarge) return this.refuse({ code: NODE_CLOSE.catalogTooLarge, reason: tooLarge });
    if (catalogHash(frame.catalog) !== frame.catalog_hash)
      return this.refuse({ code: NODE_CLOSE.invalidProof, reason: 'the catalog hash does not match the catalog' });
    this.close(NODE_CLOSE.reconnect, 'reconnect to present the changed catalog in a new hello');
  }

  /** The store failed us: the node reconnects, and the re-send recovers what was not recorded. */
  private failed(error: unknown): void {
    this.host.logger.error({ err: error, node: this.nodeId }, 'handling a node frame failed; closing the connection');
    this.close(NODE_CLOSE.hubError, 'the hub could not handle a frame; reconnect');
  }

  private onClose(code: number): void {
    if (this.state === 'closed') return;
    const wasChallenged = this.state === 'challenged';
    this.state = 'closed';
    clearTimeout(this.expiry);
    if (wasChallenged) this.host.settledChallenge(this);
    this.host.closed(this, this.closing ?? `the node closed the connection (${code})`);
  }
}
