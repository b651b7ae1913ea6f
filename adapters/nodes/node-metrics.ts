// The nodes surface's figures on /metrics, registered in the hub's own registry:
// the node connections this process holds, how admissions ended, and how the
// invocations this process recorded ended (docs/observability.md).
import { Counter, Gauge } from 'prom-client';
import type { KernelApi } from '../../core/api/kernel-api.js';

type Metrics = KernelApi['metrics'];

export interface NodeMetrics {
  /** A connection admitted (`admitted`) or refused (the close code's name). */
  admission(outcome: string): void;
  /** One more (+1) or one fewer (-1) node connection held by this process. */
  connections(delta: 1 | -1): void;
  /** An invocation ended: succeeded, failed, canceled, unknown, or swept (expired or cancelled before it was sent). */
  invocation(outcome: string, count?: number): void;
}

const cache = new WeakMap<Metrics, NodeMetrics>();

/** The figures, created once per registry (a module started twice in one hub does not register twice). */
export function nodeMetrics(metrics: Metrics): NodeMetrics {
  const known = cache.get(metrics);
  if (known) return known;
  const registers = [metrics.registry];
  const open = new Gauge({ name: 'palai_node_connections', help: 'Node connections this process holds (admitted, pending or paired).', registers });
  const admissions = new Counter({
    name: 'palai_node_connections_total',
    help: 'Node connections this process ended the handshake of, by outcome (admitted, or the refusal).',
    labelNames: ['outcome'],
    registers,
  });
  const invocations = new Counter({
    name: 'palai_node_invocations_total',
    help: 'Node invocations this process recorded the end of, by outcome (succeeded, failed, canceled, unknown, swept).',
    labelNames: ['outcome'],
    registers,
  });
  const figures: NodeMetrics = {
    admission: (outcome) => admissions.inc({ outcome }),
    connections: (delta) => open.inc(delta),
    invocation: (outcome, count = 1) => invocations.inc({ outcome }, count),
  };
  cache.set(metrics, figures);
  return figures;
}
