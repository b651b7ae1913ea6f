// The scheduler in a worker process: a tick every PALAI_SCHEDULER_INTERVAL_MS,
// and at once when a signal says a trigger was made (a hint that may be lost,
// hence the interval). A tick that reached its bound runs again straight away.
// Passes never overlap in one process; inside a pass that finds more due, a few
// ticks run side by side, and across processes SKIP LOCKED shares the work.
import type { BackgroundLoop } from '../../core/api/index.js';
import { WORK_ROLES } from '../../core/api/surface.js';
import type { AutonomySurfaceApi } from '../../core/surfaces/autonomy/autonomy-api.js';
import { TRIGGERS_SIGNAL, type TickOutcome } from '../../core/surfaces/autonomy/autonomy-port.js';
import type { WakeMetrics } from './metrics.js';

/** How many ticks run side by side while batches find more due (SKIP LOCKED gives each its own triggers). */
export const TICK_LANES = 3;

/**
 * Ticks until a batch finds nothing more due: the first alone, then
 * `lanes` at once, since a tick waits on its statements one after another
 * far more than it works.
 */
export async function tickWhileMore(tick: () => Promise<TickOutcome>, stopped: () => boolean, lanes = TICK_LANES): Promise<void> {
  let width = 1;
  for (;;) {
    const outcomes = await Promise.all(Array.from({ length: width }, tick));
    if (!outcomes.some((o) => o.more) || stopped()) return;
    width = lanes;
  }
}

/**
 * Runs a pass on every kick, never two at once: a kick while one runs makes
 * one more run after it (so a signal during a pass is not lost), until `stopped`.
 */
export function onePassAtATime(pass: () => Promise<void>, stopped: () => boolean, onError: (error: unknown) => void) {
  let running: Promise<void> | null = null;
  let again = false;
  const kick = (): void => {
    if (stopped()) return;
    if (running) {
      again = true;
      return;
    }
    running = pass()
      .catch(onError)
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          kick();
        }
      });
  };
  return {
    kick,
    /** Until no pass runs (and none follows). */
    async idle(): Promise<void> {
      while (running) await running;
    },
  };
}

function record(metrics: WakeMetrics, outcome: TickOutcome): void {
  if (outcome.admitted > 0) metrics.count('admitted', null, outcome.admitted);
  for (const [reason, n] of Object.entries(outcome.skipped)) if (n) metrics.count('skipped', reason, n);
  for (const ms of outcome.lagsMs) metrics.lag(ms);
}

export function schedulerLoop(api: AutonomySurfaceApi, intervalMs: number, metrics: () => WakeMetrics): BackgroundLoop {
  let timer: NodeJS.Timeout | null = null;
  let stopped = true;
  let unlisten: (() => Promise<void>) | null = null;

  const passes = onePassAtATime(
    async () => {
      await tickWhileMore(
        async () => {
          const outcome = await api.scheduler.tick();
          record(metrics(), outcome);
          return outcome;
        },
        () => stopped,
      );
      // What the ticks and the wakes made that needs a person's eyes, announced.
      if (!stopped) await api.scheduler.announce();
    },
    () => stopped,
    (error) => {
      metrics().tickFailed();
      api.logger.warn({ err: error }, 'a scheduler tick failed; it runs again shortly');
    },
  );
  const kick = passes.kick;
  return {
    name: 'autonomy.scheduler',
    roles: WORK_ROLES,
    async start() {
      stopped = false;
      unlisten = await api.signals.listen(TRIGGERS_SIGNAL, kick);
      timer = setInterval(kick, intervalMs);
      timer.unref();
      kick();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await unlisten?.();
      await passes.idle();
    },
  };
}
