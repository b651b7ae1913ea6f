// The contract of a surface module: what one surface (REST's neighbours A2A,
// MCP, queues, webhooks, Slack, later nodes) hands the composition root, so
// cli/hub.ts wires every surface the same way instead of each by hand.
//
// Glossary
//   role        what a process plays (`palai serve --role`): api serves HTTP,
//               worker runs responses and the outbox, consumers takes work
//               from brokers and bots, all does everything.
//   mount       a request handler for a path prefix on the API's port, served
//               before the REST routes (its errors are its own protocol's).
//   upgrade     a WebSocket (or other HTTP Upgrade) handler for a path: the
//               HTTP server forwards a matching upgrade request to it.
//   operations  REST operations of the OpenAPI document a surface owns (its
//               resources' create/list/get/…), in transport-neutral form; the
//               REST surface binds them with auth, validation and problems.
//   loop        background work with start and stop (a poller, a connection
//               supervisor, housekeeping).
//
// Reading order: SurfaceModule, then its parts. Start and stop: modules start
// in list order (HTTP parts first, then loops) and stop in reverse order;
// `intake` loops — the ones taking new work from outside — stop first of all,
// while the store is still open, so what they hold is admitted and acknowledged
// before the process closes its streams.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { OperationId } from '../../generated/operations.js';
import type { IdempotencyClaim } from '../idempotency/inbox-port.js';
import type { OutboxConsumer } from '../outbox/outbox-port.js';
import { lazyOnce } from '../lazy.js';
import type { ToolProvider } from '../tools/tool-port.js';

export type Role = 'api' | 'worker' | 'consumers' | 'all';

export const ROLES: readonly Role[] = ['api', 'worker', 'consumers', 'all'];

/** The roles that run responses and the outbox (where outbox consumers and streamers belong). */
export const WORK_ROLES: readonly Role[] = ['worker', 'all'];
/** The roles that take work from brokers and bots. */
export const INTAKE_ROLES: readonly Role[] = ['consumers', 'all'];

/**
 * A request handler in node's own terms. Written as a method's type so that
 * handlers taking richer requests (an express router's) are accepted as well.
 */
export type MountHandler = { handle(req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): unknown }['handle'];

export interface HttpMount {
  /** A path prefix such as `/a2a`. */
  path: string;
  handler: MountHandler;
}

export interface UpgradeMount {
  /** The exact path (no query) an upgrade request must have, such as `/v1/nodes/connect`. */
  path: string;
  /** Takes over the socket: answers the upgrade (or refuses it with an HTTP answer) and owns the connection. */
  handle(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/** A REST operation, as the REST surface hands it over: authenticated, validated, in text the store can hold. */
export interface OperationRequest {
  projectId: string;
  params: Record<string, string>;
  query: any;
  body: any;
  /** Set when the request carries an Idempotency-Key: pass it to the kernel command. */
  idempotency?: IdempotencyClaim;
  /** Set when this request repeats an earlier one: answer for that resource, change nothing. */
  replay?: { resourceId: string };
  /** Aborted when the caller hangs up. */
  signal: AbortSignal;
}

export interface OperationAnswer {
  /** Default 200. */
  status?: number;
  body: unknown;
}

export type SurfaceOperation = (request: OperationRequest) => Promise<OperationAnswer>;
export type SurfaceOperations = Partial<Record<OperationId, SurfaceOperation>>;

export interface BackgroundLoop {
  name: string;
  /** Where it runs; default every role. */
  roles?: readonly Role[];
  /** Takes work from outside (a broker, a bot's connection): stopped first, while the store is open. */
  intake?: boolean;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

export interface SurfaceModule {
  /** Short and unique: `a2a`, `mcp`, `queue`, `slack`, `webhooks`. */
  name: string;
  /** The roles the module takes part in at all; default every role. */
  roles?: readonly Role[];
  /** Served on the API's port (roles api and all). */
  http?: readonly HttpMount[];
  upgrade?: readonly UpgradeMount[];
  operations?: SurfaceOperations;
  /** Registered with the outbox dispatcher (roles worker and all). */
  outboxConsumers?: readonly OutboxConsumer[];
  /** Registered with the kernel's tool registry: the tool types this surface serves. */
  toolProviders?: readonly ToolProvider<any>[];
  loops?: readonly BackgroundLoop[];
  /** Releases what the module holds (client pools, producers) after every loop and the worker stopped. */
  close?(): Promise<void>;
}

/** Whether `part` (a module, a loop) runs in a process of `role`. */
export const runsIn = (part: { roles?: readonly Role[] }, role: Role): boolean => part.roles === undefined || part.roles.includes(role);

/**
 * A mount whose handler (with its protocol SDK) loads at the first request to
 * its path. A load that fails is passed to `next` (the app answers it as any
 * unexpected error) and is tried again at the next request.
 */
export function lazyMount(load: () => Promise<MountHandler>): MountHandler {
  const handler = lazyOnce(load);
  return (req, res, next) => {
    handler()
      .then((loaded) => loaded(req, res, next))
      .catch(next);
  };
}
