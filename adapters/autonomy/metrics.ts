// The scheduler's figures on the process's /metrics: wakes by outcome and
// reason, the lag from an occurrence's due time to its admission, and ticks.
// Found in the registry when another module of the same hub made them already.
import { Counter, Histogram, type Registry } from 'prom-client';

function metric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export interface WakeMetrics {
  count(outcome: 'admitted' | 'skipped', reason: string | null, by?: number): void;
  lag(ms: number): void;
  tickFailed(): void;
}

export function wakeMetrics(registry: Registry): WakeMetrics {
  const wakes = metric(
    registry,
    'palai_objective_wakes_total',
    () =>
      new Counter({
        name: 'palai_objective_wakes_total',
        help: 'Objective occurrences this process took, by outcome (admitted, skipped) and skip reason.',
        labelNames: ['outcome', 'reason'],
        registers: [registry],
      }),
  );
  const lag = metric(
    registry,
    'palai_objective_wake_lag_seconds',
    () =>
      new Histogram({
        name: 'palai_objective_wake_lag_seconds',
        help: "From an occurrence's due time to its wake's admission.",
        buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
        registers: [registry],
      }),
  );
  const failures = metric(
    registry,
    'palai_scheduler_tick_failures_total',
    () => new Counter({ name: 'palai_scheduler_tick_failures_total', help: 'Scheduler ticks that failed (they run again).', registers: [registry] }),
  );
  return {
    count: (outcome, reason, by = 1) => wakes.inc({ outcome, reason: reason ?? '' }, by),
    lag: (ms) => lag.observe(ms / 1000),
    tickFailed: () => failures.inc(),
  };
}
