// The REST surface as the host of every other surface's HTTP parts: the API
// app binds the kernel's own operations and the operations each module owns
// (its resources), serves each module's mounts before the REST routes, and
// the API listener's upgrade requests go to the module serving their path.
// The operator app (/metrics, /healthz, /readyz) stands apart, for its own port.
import type { Express } from 'express';
import type { HttpMount, KernelApi, SurfaceModule, SurfaceOperations } from '../../core/api/index.js';
import { createAdminApp, createHttpApp } from './app.js';
import type { RequestTracker } from './request-tracker.js';
import { upgradeDispatcher, type UpgradeListener } from './upgrade.js';

export interface RestHost {
  /** The API. Without an operator port it serves /metrics, /healthz and /readyz too. */
  app: Express;
  /** /metrics, /healthz and /readyz alone. */
  adminApp: Express;
  /** For the API listener's `upgrade` event; null when no module serves upgrades (then none is attached). */
  upgrade: UpgradeListener | null;
}

export interface RestHostOptions {
  /** Serve /metrics on the API's port too (no operator port). */
  metrics: boolean;
  tracker: RequestTracker;
}

/** What the REST surface serves of the modules: their mounts and their REST operations. */
export function restOptions(modules: readonly SurfaceModule[]): { mounts: HttpMount[]; operations: SurfaceOperations } {
  const operations: SurfaceOperations = {};
  for (const module of modules) {
    for (const [id, operation] of Object.entries(module.operations ?? {})) {
      if (id in operations) throw new Error(`two surfaces serve operation ${id}`);
      operations[id as keyof SurfaceOperations] = operation;
    }
  }
  return { mounts: modules.flatMap((m) => m.http ?? []), operations };
}

export function restHost(api: KernelApi, modules: readonly SurfaceModule[], options: RestHostOptions): RestHost {
  const app = createHttpApp(api, { metrics: options.metrics, tracker: options.tracker, ...restOptions(modules) });
  return {
    app,
    adminApp: createAdminApp(api),
    upgrade: upgradeDispatcher(
      api,
      app,
      modules.flatMap((m) => m.upgrade ?? []),
    ),
  };
}
