// The gateway's figures on the process's /metrics: live connections, refusals
// by close code and invocation outcomes recorded. Found in the registry when a
// second gateway of the same hub made them already.
import { Counter, Gauge, type Registry } from 'prom-client';

function metric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export function gatewayMetrics(registry: Registry) {
  return {
    connections: metric(
      registry,
      'palai_node_connections',
      () => new Gauge({ name: 'palai_node_connections', help: 'Admitted node connections open on this process.', registers: [registry] }),
    ),
    refusals: metric(
      registry,
      'palai_node_connection_refusals_total',
      () =>
        new Counter({
          name: 'palai_node_connection_refusals_total',
          help: 'Node connections this process refused, by close code.',
          labelNames: ['code'],
          registers: [registry],
        }),
    ),
    dispatched: metric(
      registry,
      'palai_node_invocations_sent_total',
      () => new Counter({ name: 'palai_node_invocations_sent_total', help: 'Invoke frames this process sent (re-sends included).', registers: [registry] }),
    ),
    outcomes: metric(
      registry,
      'palai_node_invocation_outcomes_total',
      () =>
        new Counter({
          name: 'palai_node_invocation_outcomes_total',
          help: 'Invocation outcomes nodes reported to this process and the ledger recorded, by state.',
          labelNames: ['state'],
          registers: [registry],
        }),
    ),
  };
}

export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;
