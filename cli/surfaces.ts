// Every surface module of the hub, in start order (they stop in reverse), each
// given the kernel API and its own wing's slice — and nothing of another
// surface. A new surface adds its module here and nowhere else in cli/.
import { a2aSurface } from '../adapters/a2a/surface.js';
import { autonomySurface } from '../adapters/autonomy/surface.js';
import { consoleSurface } from '../adapters/console/surface.js';
import { mcpSurface } from '../adapters/mcp/surface.js';
import { nodesSurface } from '../adapters/nodes/surface.js';
import { queueSurface, type QueueSurface } from '../adapters/queue/surface.js';
import { webhooksSurface } from '../adapters/webhooks/surface.js';
import { slackSurface, type SlackSurface } from '../bots/slack/surface.js';
import type { KernelApi, SurfaceModule } from '../core/api/index.js';
import type { Kernel } from '../core/kernel.js';
import type { A2aApi } from '../core/surfaces/a2a/a2a-api.js';
import { createA2aApi } from '../core/surfaces/a2a/create-a2a-api.js';
import type { AutonomyApi } from '../core/surfaces/autonomy/autonomy-api.js';
import { objectiveCallGate } from '../core/surfaces/autonomy/action-gate.js';
import { createAutonomyApi } from '../core/surfaces/autonomy/create-autonomy-api.js';
import type { McpApi } from '../core/surfaces/mcp/mcp-api.js';
import type { NodesApi } from '../core/surfaces/nodes/nodes-api.js';
import { createNodesApi } from '../core/surfaces/nodes/create-nodes-api.js';
import { createSecretMarkerRevealer } from '../core/surfaces/nodes/secret-reveal.js';
import { slackThreadNotices } from '../core/surfaces/slack/thread-notices.js';
import type { QueueApi } from '../core/surfaces/queue/queue-api.js';
import type { SlackApi } from '../core/surfaces/slack/slack-api.js';
import type { WebhooksApi } from '../core/surfaces/webhooks/webhooks-api.js';
import { createMcpApi } from '../core/surfaces/mcp/create-mcp-api.js';
import { createQueueApi } from '../core/surfaces/queue/create-queue-api.js';
import { createSlackApi } from '../core/surfaces/slack/create-slack-api.js';
import { createWebhooksApi } from '../core/surfaces/webhooks/create-webhooks-api.js';

export interface Surfaces {
  modules: SurfaceModule[];
  /** Each wing's slice as bound to this kernel, for the commands and tests that call a wing directly. */
  slices: { a2a: A2aApi; autonomy: AutonomyApi; mcp: McpApi; nodes: NodesApi; queue: QueueApi; slack: SlackApi; webhooks: WebhooksApi };
  /** Typed handles on two modules, for the commands and tests that look inside them. */
  queue: QueueSurface;
  slack: SlackSurface;
}

export function createSurfaces(kernel: Kernel, api: KernelApi): Surfaces {
  const slices = {
    a2a: createA2aApi(kernel),
    autonomy: createAutonomyApi(kernel),
    mcp: createMcpApi(kernel),
    nodes: createNodesApi(kernel),
    queue: createQueueApi(kernel),
    slack: createSlackApi(kernel),
    webhooks: createWebhooksApi(kernel),
  };
  // A wake's calls pass its objective's gate: the autonomy wing's, registered with the kernel.
  kernel.callGate = objectiveCallGate;
  // A node command's output names the secrets it printed; the model reads their values (the nodes wing's revealer).
  kernel.secretMarkers = createSecretMarkerRevealer(kernel.secrets);
  // A Slack thread's session: an objective on it announces there (the Slack wing's session notices).
  kernel.sessionNotices = [slackThreadNotices];
  const queue = queueSurface({ ...api, ...slices.queue });
  const slack = slackSurface({ ...api, ...slices.slack });
  const nodes = nodesSurface({ ...api, ...slices.nodes });
  const modules = [
    a2aSurface({ ...api, ...slices.a2a }),
    mcpSurface({ ...api, ...slices.mcp }),
    webhooksSurface({ ...api, ...slices.webhooks }),
    nodes,
    autonomySurface({ ...api, ...slices.autonomy }),
    queue,
    slack,
    consoleSurface(api),
  ];
  return { modules, slices, queue, slack };
}
