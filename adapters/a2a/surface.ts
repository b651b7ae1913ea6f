// The A2A surface as a module of the hub: every agent served to A2A clients
// under /a2a (loaded with the A2A SDK at the first request), the project's
// remote A2A agents as tools, their REST resources, and push notifications
// carried by the outbox.
import type { SurfaceModule } from '../../core/api/index.js';
import { lazyMount } from '../../core/api/index.js';
import type { A2aSurfaceApi } from '../../core/surfaces/a2a/a2a-api.js';
import { lazyPushConsumer } from './lazy-push-consumer.js';
import { remoteAgentOperations } from './operations.js';
import { remoteAgentTools } from './remote-agent-tool.js';

export function a2aSurface(api: A2aSurfaceApi): SurfaceModule {
  return {
    name: 'a2a',
    http: [{ path: '/a2a', handler: lazyMount(async () => (await import('./router.js')).a2aRouter(api)) }],
    operations: remoteAgentOperations(api),
    outboxConsumers: [lazyPushConsumer(async () => (await import('./push-consumer.js')).a2aPushConsumer(api, api.egress))],
    toolProviders: [remoteAgentTools(api)],
  };
}
