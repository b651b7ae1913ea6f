// The nodes surface as a module of the hub: the REST resources of enrollments,
// nodes and their ledger, the WebSocket gateway companions connect to
// (`upgrade` on the API's roles), the `node` tool provider, and the sweep that
// ends what was never sent.
import type { BackgroundLoop, SurfaceModule } from '../../core/api/index.js';
import { WORK_ROLES } from '../../core/api/surface.js';
import type { NodesSurfaceApi } from '../../core/surfaces/nodes/nodes-api.js';
import { nodeGateway, type NodeGatewayOptions } from './gateway/index.js';
import { gatewayMetrics } from './gateway/metrics.js';
import { registerNodeMetrics } from './metrics.js';
import { nodeTools } from './node-tools.js';
import { nodeOperations } from './operations.js';

/** How often the sweep ends expired and cancelled plans that were never sent. */
export const SWEEP_INTERVAL_MS = 5_000;

function sweepLoop(api: NodesSurfaceApi, intervalMs: number): BackgroundLoop {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const tick = () => {
    running = api.nodeGateway
      .sweep()
      .then(async (ended) => {
        // Expired (NODE_UNAVAILABLE) or cancelled before they were sent, or past any report (INVOCATION_UNKNOWN).
        if (ended > 0) gatewayMetrics(api.metrics.registry).outcomes.inc({ state: 'swept' }, ended);
        // And what ended longer ago than the ledger keeps.
        await api.nodeGateway.purge();
      })
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

export function nodesSurface(api: NodesSurfaceApi, options: { sweepIntervalMs?: number; gateway?: NodeGatewayOptions } = {}): SurfaceModule {
  const gateway = nodeGateway(api, options.gateway);
  return {
    name: 'nodes',
    operations: nodeOperations(api),
    upgrade: [gateway.upgrade],
    toolProviders: [nodeTools(api.nodeCalls)],
    loops: [metricsLoop(api), sweepLoop(api, options.sweepIntervalMs ?? SWEEP_INTERVAL_MS), ...gateway.loops],
    close: gateway.close,
  };
}
