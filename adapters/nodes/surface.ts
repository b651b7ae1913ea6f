// The nodes surface as a module of the hub: the REST resources of enrollments,
// nodes and their ledger, and the sweep that ends what was never sent. The
// WebSocket gateway (`upgrade`) and the `node` tool provider (`toolProviders`)
// come in through `extra`.
import type { BackgroundLoop, SurfaceModule } from '../../core/api/index.js';
import { WORK_ROLES } from '../../core/api/surface.js';
import type { NodesSurfaceApi } from '../../core/surfaces/nodes/nodes-api.js';
import { registerNodeMetrics } from './metrics.js';
import { nodeOperations } from './operations.js';

/** How often the sweep ends expired and cancelled plans that were never sent. */
export const SWEEP_INTERVAL_MS = 5_000;

/** What the lead wires beside the REST resources. */
export type NodesSurfaceExtra = Pick<SurfaceModule, 'upgrade' | 'toolProviders' | 'loops' | 'close'>;

function sweepLoop(api: NodesSurfaceApi, intervalMs: number): BackgroundLoop {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const tick = () => {
    running = api.nodeGateway
      .sweep()
      .then(() => undefined)
      .catch((error: unknown) => api.logger.warn({ err: error }, 'the node ledger sweep failed; it runs again shortly'))
      .finally(() => {
        running = null;
      });
  };
  return {
    name: 'nodes.sweep',
    roles: WORK_ROLES,
    start() {
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}

/** Registers the wing's gauges when the hub starts (every role serves /metrics), not when the module is merely built. */
const metricsLoop = (api: NodesSurfaceApi): BackgroundLoop => ({
  name: 'nodes.metrics',
  start: () => registerNodeMetrics(api, api.metrics.registry),
  stop: () => undefined,
});

export function nodesSurface(api: NodesSurfaceApi, extra: NodesSurfaceExtra = {}, options: { sweepIntervalMs?: number } = {}): SurfaceModule {
  return {
    // ---- wired by the lead through `extra`: `upgrade` (the WebSocket gateway, adapters/nodes/gateway)
    // ---- and `toolProviders` (the `node` tool provider); their loops and close come with them.
    ...extra,
    name: 'nodes',
    operations: nodeOperations(api),
    loops: [metricsLoop(api), sweepLoop(api, options.sweepIntervalMs ?? SWEEP_INTERVAL_MS), ...(extra.loops ?? [])],
  };
}
