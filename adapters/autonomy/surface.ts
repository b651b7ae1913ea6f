// The autonomy surface as a module of the hub: the REST resources of
// objectives, the scheduler in worker processes, and the wake tools.
import type { SurfaceModule } from '../../core/api/index.js';
import type { AutonomySurfaceApi } from '../../core/surfaces/autonomy/autonomy-api.js';
import { wakeMetrics, type WakeMetrics } from './metrics.js';
import { objectiveOperations } from './operations.js';
import { schedulerLoop } from './scheduler-loop.js';
import { wakeTools } from './wake-tools.js';

export function autonomySurface(api: AutonomySurfaceApi): SurfaceModule {
  // Made when first counted, in the hub's registry (every role serves /metrics).
  let made: WakeMetrics | null = null;
  const metrics = () => (made ??= wakeMetrics(api.metrics.registry));
  return {
    name: 'autonomy',
    operations: objectiveOperations(api, metrics),
    toolProviders: [wakeTools(api.objectiveCalls)],
    loops: [schedulerLoop(api, api.config.schedulerIntervalMs, metrics)],
  };
}
