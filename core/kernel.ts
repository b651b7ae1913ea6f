// What every surface receives from the composition root: the store, the
// wake-up fan-out, the model registry, configuration and the logger.
import type { PalaiConfig } from './config.js';
import type { EgressFetch } from './egress/egress-port.js';
import type { Wakeups } from './journal/wakeups.js';
import type { Lifecycle } from './lifecycle.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { ModelRegistry } from './models/model-port.js';
import type { SecretBox } from './secrets/secret-box.js';
import type { Db } from './store/db.js';

export interface Kernel {
  db: Db;
  wakeups: Wakeups;
  models: ModelRegistry;
  config: PalaiConfig;
  logger: Logger;
  metrics: Metrics;
  /** Decrypts stored provider keys; null without PALAI_SECRET_KEY. */
  secrets: SecretBox | null;
  /** The one way outbound HTTP leaves the process (model SDKs, tools, later webhooks): the egress guard's fetch. */
  egress: EgressFetch;
  /** Where this process is in its shutdown: surfaces stop taking work when it drains. */
  lifecycle: Lifecycle;
}
