// The hub side of GET /v1/nodes/connect. Each admitted node's connection is
// held under a cluster lease (`nodes.connection:<id>`, renewed after a third of
// its life): the process holding it is the one that sends the node its plans
// and cancels, and records its connection. A newer connection supersedes an
// older one — here at once (4410), in another process by a signal that makes
// the holder close its connection (4410) and hand the lease back. A holder
// that loses its lease closes the socket so that the node reconnects.
//
// Dispatch: the wing's work signal, or a poll every second, claims the
// prepared plans of the held nodes; right after a connection takes its lease
// the node's sent-but-unfinished plans are sent again (the companion's ledger
// answers a re-send from its record). Claims run one at a time, so a plan is
// never sent twice by one claim racing another.
import { once } from 'node:events';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { NodeExecutionPlan, NodeInvokeResultFrame } from '../../../generated/protocol-schemas.js';
import { storableText } from '../../../core/api/index.js';
import type { LeaseGrant } from '../../../core/leases/lease-port.js';
import type { Logger } from '../../../core/logger.js';
import type { NodesSurfaceApi } from '../../../core/surfaces/nodes/nodes-api.js';
import { NODE_SIGNALS, nodeConnectionLease, type NodeAdmission, type NodeGatewayPort } from '../../../core/surfaces/nodes/node-gateway-port.js';
import { NODE_CLOSE } from '../../../core/surfaces/nodes/wire/close-codes.js';
import { CHALLENGE_TTL_MS, HEARTBEAT_MS, MAX_FRAME_BYTES, MAX_OPEN_CHALLENGES } from '../../../core/surfaces/nodes/wire/limits.js';
import { NodeConnection, type ConnectionHost } from './connection.js';
import { loadFrameValidators, sendFrame } from './frames.js';
import type { Refusal } from './hello.js';
import { gatewayMetrics, type GatewayMetrics } from './metrics.js';

/** How long a shutdown waits for the nodes to answer its close before it drops their sockets. */
const CLOSE_GRACE_MS = 500;

/** Sent by a process whose new connection of a node finds the node's lease held elsewhere: payload `<node id> <holder>`. */
export const NODE_CONNECTION_SIGNAL = 'nodes.connection';

export interface NodeGatewayOptions {
  /** Who this process is, for the leases and the plans it dispatches. Default host:pid:random. */
  holder?: string;
  /** The poll behind the work signal. Default 1 s. */
  pollMs?: number;
  /** How often held connections are looked after (lease renewals, heartbeats) and plans polled for. Default pollMs, or a third of the lease when shorter. */
  lookMs?: number;
  /** The connection lease's time to live; renewed after a third of it. Default 15 s, or PALAI_LEASE_SECONDS when shorter. */
  leaseMs?: number;
  /** How long a challenge stays open. Default 30 s (the protocol's). */
  challengeTtlMs?: number;
  /** Open challenges on this process; beyond, a new connection is closed 4429. Default 1024. */
  maxOpenChallenges?: number;
  /** How often the hub sends a heartbeat; a node silent for three is gone. Default 10 s. */
  heartbeatMs?: number;
  /** Default: the API's logger. */
  logger?: Logger;
}

/** Whether the operator's approval is the same (the connection's own state, connected or not, is not an approval). */
const sameApproval = (a: NodeAdmission, b: NodeAdmission): boolean =>
  a.approvedCatalogHash === b.approvedCatalogHash &&
  a.usableCommands.join('\n') === b.usableCommands.join('\n') &&
  a.allowedCommands.join('\n') === b.allowedCommands.join('\n');

/** NUL bytes and lone surrogates cannot be stored: replaced before the store sees the result. */
function storable(frame: NodeInvokeResultFrame): NodeInvokeResultFrame {
  const out = { ...frame };
  if (frame.result) out.result = { ...frame.result, stdout: storableText(frame.result.stdout), stderr: storableText(frame.result.stderr) };
  if (frame.failure) out.failure = { ...frame.failure, message: storableText(frame.failure.message) };
  return out;
}

export class NodeGatewayServer implements ConnectionHost {
  readonly holder: string;
  readonly port: NodeGatewayPort;
  readonly logger: Logger;
  readonly challengeTtlMs: number;
  private readonly pollMs: number;
  private readonly lookMs: number;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly maxOpenChallenges: number;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private figures: GatewayMetrics | null = null;
  private readonly challenged = new Set<NodeConnection>();
  private readonly byNode = new Map<string, NodeConnection>();
  /** Tenures being ended (recorded, released), awaited by stop. */
  private readonly ending = new Set<Promise<void>>();
  private queue: Promise<void> = Promise.resolve();
  private pollQueued = false;
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private unlisten: Array<() => Promise<void>> = [];
  private started = false;
  private stopped = false;
  private stopping: Promise<void> | null = null;
  private readonly onDrain = () => void this.stop();

  constructor(
    private readonly api: NodesSurfaceApi,
    options: NodeGatewayOptions = {},
  ) {
    this.port = api.nodeGateway;
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.logger = (options.logger ?? api.logger).child({ component: 'node-gateway' });
    this.pollMs = options.pollMs ?? 1_000;
    // A node whose holder died waits this long for another process to take it over.
    this.leaseMs = options.leaseMs ?? Math.min(15_000, api.config.leaseSeconds * 1000);
    // The leases must be renewed before they run out, however long the poll.
    this.lookMs = options.lookMs ?? Math.min(this.pollMs, this.leaseMs / 3);
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
    this.challengeTtlMs = options.challengeTtlMs ?? CHALLENGE_TTL_MS;
    this.maxOpenChallenges = options.maxOpenChallenges ?? MAX_OPEN_CHALLENGES;
  }

  /** Made at first use: a module is built before (and without) the parts a running hub has. */
  private get metrics(): GatewayMetrics {
    return (this.figures ??= gatewayMetrics(this.api.metrics.registry));
  }

  /** The nodes whose lease this process holds now. */
  held(): string[] {
    return [...this.byNode.values()].filter((c) => c.lease !== null && !c.ended).map((c) => c.nodeId as string);
  }

  /** The upgrade of a request to the connect path. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.stopped) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
  }

  private accept(ws: WebSocket): void {
    if (this.stopped) return ws.close(NODE_CLOSE.goingAway, 'the hub is shutting down');
    if (this.challenged.size >= this.maxOpenChallenges) {
      this.metrics.refusals.inc({ code: String(NODE_CLOSE.busy) });
      ws.on('error', () => undefined);
      return ws.close(NODE_CLOSE.busy, 'too many open challenges on this hub process; retry later');
    }
    this.challenged.add(new NodeConnection(ws, this));
  }

  async start(): Promise<void> {
    if (this.started || this.stopped) return;
    this.started = true;
    await loadFrameValidators();
    if (this.api.lifecycle.draining.aborted) return this.stop();
    this.api.lifecycle.draining.addEventListener('abort', this.onDrain, { once: true });
    this.unlisten = await Promise.all([
      this.api.signals.listen(NODE_SIGNALS.work, (nodeId) => this.onWork(nodeId)),
      this.api.signals.listen(NODE_SIGNALS.changed, (nodeId) => this.onChanged(nodeId)),
      this.api.signals.listen(NODE_CONNECTION_SIGNAL, (payload) => this.onNewerElsewhere(payload)),
    ]);
    const every = this.lookMs;
    const next = () => {
      if (this.stopped) return;
      this.ticking = this.tick().finally(() => {
        if (!this.stopped) this.timer = setTimeout(next, every).unref();
      });
    };
    this.timer = setTimeout(next, every).unref();
  }

  /** Closes every connection (1001), records their end and hands their leases back. */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    this.stopped = true;
    this.api.lifecycle.draining.removeEventListener('abort', this.onDrain);
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await Promise.all(this.unlisten.map((stop) => stop().catch(() => undefined)));
    const open = [...this.challenged, ...this.byNode.values()];
    for (const connection of open) connection.close(NODE_CLOSE.goingAway, 'the hub is shutting down');
    await Promise.all(open.map((connection) => this.endTenure(connection, 'the hub process shut down')));
    await Promise.all([...this.ending]);
    await this.queue;
    // A peer that does not answer the close handshake is waited for only a moment.
    const ends = open.map((connection) => (connection.ws.readyState === connection.ws.CLOSED ? null : once(connection.ws, 'close')));
    const grace = sleep(CLOSE_GRACE_MS, undefined, { ref: false });
    await Promise.race([Promise.all(ends), grace]);
    for (const connection of open) if (connection.ws.readyState !== connection.ws.CLOSED) connection.terminate('the hub is shutting down');
    this.wss.close();
  }

  // ── ConnectionHost ──────────────────────────────────────────────────────

  settledChallenge(connection: NodeConnection): void {
    this.challenged.delete(connection);
  }

  refused(_connection: NodeConnection, refusal: Refusal): void {
    this.metrics.refusals.inc({ code: String(refusal.code) });
  }

  admitted(connection: NodeConnection): void {
    const nodeId = connection.nodeId as string;
    const older = this.byNode.get(nodeId);
    if (older && older !== connection) {
      // Its tenure is replaced by this connection's (the same holder takes the key anew).
      older.recordsEnd = false;
      older.close(NODE_CLOSE.superseded, 'another connection of the node took over');
    }
    this.byNode.set(nodeId, connection);
    this.metrics.connections.inc();
    if (this.stopped) return connection.close(NODE_CLOSE.goingAway, 'the hub is shutting down');
    this.look(connection);
  }

  async heartbeat(connection: NodeConnection): Promise<void> {
    const nodeId = connection.nodeId as string;
    if (connection.lease) await this.port.seen(nodeId);
    // Also the poll behind the approval signal, which may be lost.
    await this.refresh(connection);
  }

  async result(connection: NodeConnection, frame: NodeInvokeResultFrame): Promise<void> {
    const recorded = await this.port.finished(connection.nodeId as string, storable(frame));
    connection.sent.delete(frame.invocation_id);
    connection.cancelsSent.delete(frame.invocation_id);
    // A repeated result (the companion re-sent it after a reconnect) was counted the first time.
    if (recorded === 'recorded') this.metrics.outcomes.inc({ state: frame.state });
    else if (recorded === 'refused')
      this.logger.warn({ node: connection.nodeId, invocation: frame.invocation_id }, 'a result whose plan hash is not the invocation’s was ignored');
  }

  closed(connection: NodeConnection, why: string): void {
    this.challenged.delete(connection);
    const nodeId = connection.nodeId;
    if (nodeId !== null && this.byNode.get(nodeId) === connection) this.byNode.delete(nodeId);
    if (connection.admission) this.metrics.connections.dec();
    const ending = this.endTenure(connection, why);
    this.ending.add(ending);
    void ending.finally(() => this.ending.delete(ending));
  }

  // ── leases ──────────────────────────────────────────────────────────────

  /** Runs the connection's lease and heartbeat step unless one is running. */
  private look(connection: NodeConnection): Promise<void> {
    connection.upkeep ??= this.upkeep(connection)
      .catch((error: unknown) => this.logger.warn({ err: error, node: connection.nodeId }, "looking after a node's connection failed; retrying"))
      .finally(() => {
        connection.upkeep = null;
      });
    return connection.upkeep;
  }

  private async upkeep(connection: NodeConnection): Promise<void> {
    if (connection.ended || connection.state !== 'admitted') return;
    const nodeId = connection.nodeId as string;
    const key = nodeConnectionLease(nodeId);
    const now = Date.now();
    if (now - connection.lastHeard > 3 * this.heartbeatMs) return connection.terminate(`no frame from the node for ${(3 * this.heartbeatMs) / 1000} s`);
    if (now - connection.lastBeat >= this.heartbeatMs) {
      connection.lastBeat = now;
      sendFrame(connection.ws, { type: 'heartbeat' });
    }
    if (!connection.lease) {
      const grant = await this.api.leases.take(key, this.holder, this.leaseMs);
      if (!grant) {
        if (!connection.announced) {
          connection.announced = true;
          await this.api.signals.notify(NODE_CONNECTION_SIGNAL, `${nodeId} ${this.holder}`);
        }
        return;
      }
      if (connection.ended) {
        await this.api.leases.release(grant);
        return;
      }
      connection.lease = grant;
      connection.leasedAt = now;
      this.logger.info({ node: nodeId, holder: this.holder }, "this process holds the node's connection");
    } else if (now - connection.leasedAt >= this.leaseMs / 3) {
      if (!(await this.renew(connection, now))) return;
    }
    // Retried at the next look until it succeeded: the record, then the re-send.
    if (!connection.onRecord) {
      await this.port.connected(nodeId);
      connection.onRecord = true;
    }
    if (connection.needsResend && !connection.resendQueued) {
      connection.resendQueued = true;
      this.enqueue(() => this.resend(connection));
    }
  }

  /** False when the lease is gone (the connection is being closed). */
  private async renew(connection: NodeConnection, now: number): Promise<boolean> {
    let grant;
    try {
      grant = await this.api.leases.renew(connection.lease as LeaseGrant, this.leaseMs);
    } catch (error) {
      // Without the store, the lease is ours only until it would have run out.
      if (Date.now() - connection.leasedAt >= this.leaseMs) {
        connection.recordsEnd = false;
        connection.close(NODE_CLOSE.goingAway, 'the hub lost its hold on the node; reconnect');
      }
      throw error;
    }
    if (!grant) {
      connection.recordsEnd = false;
      connection.lease = null;
      connection.close(NODE_CLOSE.superseded, 'another hub process holds the node now; reconnect');
      return false;
    }
    if (!connection.ended) connection.lease = grant;
    connection.leasedAt = now;
    return true;
  }

  /** Records the end of the connection (when it is its to record) and hands the lease back; once. */
  private async endTenure(connection: NodeConnection, why: string): Promise<void> {
    if (connection.ended) return;
    connection.ended = true;
    await connection.settled();
    await connection.upkeep;
    const lease = connection.lease;
    connection.lease = null;
    if (!lease) return;
    const nodeId = connection.nodeId as string;
    if (connection.recordsEnd)
      await this.port
        .disconnected(nodeId, why)
        .catch((error: unknown) => this.logger.warn({ err: error, node: nodeId }, "recording a node's disconnection failed"));
    await this.api.leases
      .release(lease)
      .catch((error: unknown) => this.logger.warn({ err: error, node: nodeId }, "handing back a node's connection lease failed; it runs out by itself"));
  }

  private async tick(): Promise<void> {
    await Promise.all([...this.byNode.values()].map((connection) => this.look(connection)));
    this.requestPoll();
  }

  // ── signals ─────────────────────────────────────────────────────────────

  private onWork(nodeId: string): void {
    if (this.byNode.get(nodeId)?.lease) this.requestPoll();
  }

  private onChanged(nodeId: string): void {
    const connection = this.byNode.get(nodeId);
    if (connection)
      void this.refresh(connection).catch((error: unknown) => this.logger.warn({ err: error, node: nodeId }, "re-reading a node's admission failed"));
  }

  private onNewerElsewhere(payload: string): void {
    const [nodeId, holder] = payload.split(' ');
    if (holder === this.holder) return;
    const connection = this.byNode.get(nodeId);
    if (!connection) return;
    // The newer connection records itself once it has the lease, which this one hands back.
    connection.recordsEnd = false;
    connection.close(NODE_CLOSE.superseded, 'a newer connection of the node reached another hub process');
  }

  /** Re-reads the admission: revoked (or gone) closes 4403; a changed approval is sent as `approved`. */
  private async refresh(connection: NodeConnection): Promise<void> {
    const nodeId = connection.nodeId as string;
    const admission = await this.port.admission(nodeId);
    if (connection.state !== 'admitted') return;
    if (!admission || admission.state === 'revoked') return connection.close(NODE_CLOSE.revoked, 'the node was revoked');
    const before = connection.admission as NodeAdmission;
    connection.admission = admission;
    if (sameApproval(before, admission) || admission.approvedCatalogHash === null) return;
    sendFrame(connection.ws, {
      type: 'approved',
      state: admission.state,
      allowed_commands: admission.usableCommands,
      approved_catalog_hash: admission.approvedCatalogHash,
    });
  }

  // ── dispatch ────────────────────────────────────────────────────────────

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((error: unknown) => this.logger.warn({ err: error }, 'dispatching node invocations failed; the poll retries'));
  }

  private requestPoll(): void {
    if (this.pollQueued || this.stopped) return;
    this.pollQueued = true;
    this.enqueue(async () => {
      this.pollQueued = false;
      await this.poll();
    });
  }

  private leased(): NodeConnection[] {
    // A connection's first claim is its re-send, which also takes what is prepared.
    return [...this.byNode.values()].filter((c) => c.lease !== null && !c.ended && c.state === 'admitted' && !c.needsResend);
  }

  private async poll(): Promise<void> {
    const connections = this.leased();
    if (connections.length === 0) return;
    const ids = connections.map((c) => c.nodeId as string);
    await this.send(await this.port.claimDispatch(ids, this.holder, { resend: false }));
    this.cancel(await this.port.toCancel(ids));
  }

  /** After a connection took its lease: everything sent to the node before and not finished, then its cancels. */
  private async resend(connection: NodeConnection): Promise<void> {
    try {
      if (connection.ended || connection.state !== 'admitted') return;
      const nodeId = connection.nodeId as string;
      // Cancels first: a plan sent on an earlier connection whose cancel was asked since comes again
      // after its cancel, so a node that never got it refuses it instead of starting it.
      const stops = await this.port.toCancel([nodeId]);
      for (const id of stops) connection.sent.add(id);
      this.cancel(stops);
      await this.send(await this.port.claimDispatch([nodeId], this.holder, { resend: true }));
      connection.needsResend = false;
      this.cancel(await this.port.toCancel([nodeId]));
    } finally {
      connection.resendQueued = false;
    }
  }

  private async send(plans: NodeExecutionPlan[]): Promise<void> {
    for (const plan of plans) {
      const connection = this.byNode.get(plan.node_id);
      // Claimed but not sent: it is re-sent once the node reconnects.
      if (!connection?.lease || connection.ended) continue;
      // A secret environment's values are revealed for this send only, beside the plan; a secret that no
      // longer matches the plan is sent without, and the node refuses the plan (nothing runs).
      const secrets = plan.secret_env?.length ? await this.port.secretEnv(plan.invocation_id) : null;
      if (connection.ended) continue;
      if (sendFrame(connection.ws, { type: 'invoke', plan, ...(secrets && Object.keys(secrets).length > 0 ? { secrets } : {}) })) {
        connection.sent.add(plan.invocation_id);
        this.metrics.dispatched.inc();
      }
    }
  }

  private cancel(invocationIds: string[]): void {
    for (const invocationId of invocationIds) {
      for (const connection of this.byNode.values()) {
        if (!connection.sent.has(invocationId) || connection.cancelsSent.has(invocationId)) continue;
        if (sendFrame(connection.ws, { type: 'invoke.cancel', invocation_id: invocationId })) connection.cancelsSent.add(invocationId);
      }
    }
  }
}
