// A test hub on both stores with the nodes gateway on a real listener: the
// hub's API app and the gateway's upgrade behind the same dispatcher the hub
// uses (adapters/http/upgrade.ts), the gateway's loop started and stopped with
// the suite. `nodeRows` counts what the store holds, for "nothing written".
import { after, before } from 'node:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { upgradeDispatcher } from '../../adapters/http/upgrade.js';
import { nodeGateway, NODE_CONNECT_PATH, type NodeGateway, type NodeGatewayOptions } from '../../adapters/nodes/gateway/index.js';
import type { NodesSurfaceApi } from '../../core/surfaces/nodes/nodes-api.js';
import { describeEachStore, withSlice, type TestHub } from '../support/hub.js';
import { RawNode } from './raw-node.js';

export interface GatewayHub extends TestHub {
  api: NodesSurfaceApi;
  gateway: NodeGateway;
  /** ws://…/v1/nodes/connect */
  url: string;
  /** Rows of `nodes` (every project). */
  nodeRows(): Promise<number>;
  /** A single-use enrollment token of the test project. */
  token(): Promise<string>;
  /** A second gateway on the same store, as another hub process would run it (its own holder and listener). */
  another(options?: NodeGatewayOptions): Promise<{ gateway: NodeGateway; url: string }>;
}

async function serve(hub: TestHub, api: NodesSurfaceApi, gateway: NodeGateway): Promise<{ server: Server; url: string }> {
  const server = createServer(hub.hub.app);
  const upgrade = upgradeDispatcher(api, hub.hub.app, [gateway.upgrade]);
  if (upgrade) server.on('upgrade', upgrade);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}${NODE_CONNECT_PATH}` };
}

async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export function describeGateway(name: string, suite: (ctx: () => GatewayHub) => void, options: NodeGatewayOptions = {}): Promise<void> {
  return describeEachStore(name, (hubCtx) => {
    let current: GatewayHub | null = null;
    const started: Array<{ gateway: NodeGateway; server: Server }> = [];
    before(async () => {
      const hub = hubCtx();
      const api = withSlice(hub.hub, 'nodes');
      const start = async (opts: NodeGatewayOptions) => {
        const gateway = nodeGateway(api, { pollMs: 100, ...opts });
        for (const loop of gateway.loops) await loop.start();
        const { server, url } = await serve(hub, api, gateway);
        started.push({ gateway, server });
        return { gateway, url };
      };
      const { gateway, url } = await start(options);
      current = {
        ...hub,
        api,
        gateway,
        url,
        nodeRows: async () => (await hub.hub.kernel.db.query<{ n: number }>('SELECT count(*)::int AS n FROM nodes')).rows[0].n,
        token: async () => {
          const { token } = await api.nodeEnrollments.create(hub.projectId, { max_uses: 1 });
          if (!token) throw new Error('a new enrollment answers with its token');
          return token;
        },
        another: (opts = {}) => start({ ...options, ...opts }),
      };
    });
    after(async () => {
      for (const { gateway, server } of started.reverse()) {
        await gateway.close();
        await shut(server);
      }
    });
    suite(() => {
      if (!current) throw new Error('gateway hub not started');
      return current;
    });
  });
}

export { RawNode };
