// The nodes wing on /metrics: nodes by state and the ledger by state, read from
// the store at each scrape (all projects), so every process reports the same.
// The gateway adds its own per-process connection counts.
import { Gauge, type Registry } from 'prom-client';
import type { NodesSurfaceApi } from '../../core/surfaces/nodes/nodes-api.js';

export function registerNodeMetrics(api: NodesSurfaceApi, registry: Registry): void {
  // One registry per hub; a second app over the same kernel (tests) must not register twice.
  if (registry.getSingleMetric('palai_nodes')) return;
  new Gauge({
    name: 'palai_nodes',
    help: 'Companion nodes by state (pending_pairing, connected, disconnected, degraded, revoked), all projects.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await api.nodes.counts();
      this.reset();
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
  new Gauge({
    name: 'palai_node_invocations',
    help: 'Node invocations by ledger state (prepared … succeeded, failed, canceled, unknown, expired), all projects.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await api.nodeInvocations.counts();
      this.reset();
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
}
