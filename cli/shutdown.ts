// Graceful shutdown of `palai serve`, in two phases (docs/durability.md has the
// timeline):
//   drain — stop claiming and stop accepting connections at once (/readyz turns
//           503 on the operator listener); running responses and requests in
//           flight may finish, for up to the grace period;
//   close — what still runs is interrupted and its lease handed back, so another
//           process continues it at once; event streams end with an `error` event
//           saying where to resume, waiting requests get a 503 naming their
//           response; then the connections and the store are closed.
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Hub } from './hub.js';

/** How long closing streams and requests get to write their last words. */
const FAREWELL_MS = 2_000;
const POLL_MS = 50;

export interface Listeners {
  /** The API listener; null for a worker. */
  api: Server | null;
  /** The operator listener (/metrics, /healthz, /readyz); null when the API port serves them. */
  admin: Server | null;
}

/** Resolves once `done()` holds or `ms` have passed; says which. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
  return true;
}

const closed = (server: Server | null): Promise<void> => (server ? new Promise((resolve) => server.close(() => resolve())) : Promise.resolve());

/** `before` (the operator socket's commands) is waited for before the store closes. */
export async function shutDown(hub: Hub, listeners: Listeners, graceMs: number, say: (line: string) => void, before?: Promise<void>): Promise<void> {
  const { lifecycle } = hub.kernel;
  lifecycle.beginDrain();
  hub.worker?.stopClaiming();
  // Consumers stop taking messages now, and admit and acknowledge what they hold while the store is open.
  const consumersStopped = hub.queues?.stop() ?? Promise.resolve();
  const apiClosed = closed(listeners.api);
  listeners.api?.closeIdleConnections();

  const running = () => hub.worker?.busy ?? 0;
  await consumersStopped;
  const drained = await until(() => running() === 0 && hub.requests.busy === 0, graceMs);
  if (!drained) say(`Grace period over: handing ${running()} running response(s) to other processes.`);

  lifecycle.beginClose();
  await hub.worker?.stop();
  await until(() => hub.requests.busy === 0 && hub.requests.streams === 0, FAREWELL_MS);
  listeners.api?.closeAllConnections();
  await apiClosed;
  await before;
  await hub.close();
  const adminClosed = closed(listeners.admin);
  listeners.admin?.closeAllConnections();
  await adminClosed;
}
