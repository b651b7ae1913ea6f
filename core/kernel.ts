// The kernel's own parts, as the composition root (cli/) wires them: the store,
// the wake-up fan-out, the registries of model and tool providers, the secret
// store, the egress guard, the inbox, configuration, logging and metrics. Only
// core and cli/ see this; surfaces get the KernelApi (core/api/) built on it.
import type { AdmissionCommand } from '../generated/protocol-schemas.js';
import type { RecalledKey } from './auth/recalled-keys.js';
import type { PalaiConfig } from './config.js';
import type { EgressFetch } from './egress/egress-port.js';
import type { Inbox } from './idempotency/inbox-port.js';
import type { Wakeups } from './journal/wakeups.js';
import type { IdempotencyClaim } from './idempotency/inbox-port.js';
import type { Lifecycle } from './lifecycle.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { ModelRegistry } from './models/model-port.js';
import type { ResponseRow } from './responses/responses.js';
import type { SecretStore } from './secrets/secret-port.js';
import type { SecretMarkerRevealer } from './tools/secret-marker-port.js';
import type { SessionNotices } from './outbox/session-notice-port.js';
import type { Db } from './store/db.js';
import type { ToolRegistry } from './tools/tool-registry.js';
import type { AgentMemory } from './agents/recalled-agents.js';
import type { CallGate } from './tools/call-gate-port.js';

export interface Kernel {
  db: Db;
  wakeups: Wakeups;
  models: ModelRegistry;
  /** Tool providers by kind (built-in, client function, and every remote kind a surface registers). */
  tools: ToolRegistry;
  /** The agents this process admitted runs of, which an admission checks in its write instead of reading them first (absent: it reads them). */
  agents?: AgentMemory;
  config: PalaiConfig;
  logger: Logger;
  metrics: Metrics;
  /** Encrypted secrets by reference, and the operator's allow-listed environment keys. */
  secrets: SecretStore;
  /** The one way outbound HTTP leaves the process (model SDKs, tools, webhooks): the egress guard's fetch. */
  egress: EgressFetch;
  /** Inbound deduplication by (project, source, key). */
  inbox: Inbox;
  /** Where this process is in its shutdown: surfaces stop taking work when it drains. */
  lifecycle: Lifecycle;
  /** The worker of this process while it takes work (roles worker and all); absent otherwise. */
  localRuns?: LocalRuns;
  /** The gate a wake's calls pass (registered by the autonomy wing); without it such calls are refused. */
  callGate?: CallGate;
  /** Puts secret values a tool's output names by marker back into the model's input (registered by the nodes wing). */
  secretMarkers?: SecretMarkerRevealer;
  /** Surfaces whose threads are sessions (Slack's), for announcements about a session (registered by those wings). */
  sessionNotices?: SessionNotices[];
}

/** What a worker offers the API of its own process. */
export interface LocalRuns {
  /**
   * Admits a response and claims it in the same transaction, to run here at
   * once; null (nothing written) when no slot is free or older work waits, and
   * the caller admits it the ordinary way.
   */
  admitHere(projectId: string, command: AdmissionCommand, idem?: IdempotencyClaim, key?: RecalledKey): Promise<ResponseRow | null>;
  /** The end of a run of this process: the row it ended or parked with, or null when it stopped without either. Null when none runs here. */
  outcome(responseId: string): Promise<ResponseRow | null> | null;
}
