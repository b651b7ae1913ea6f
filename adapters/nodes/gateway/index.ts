// The nodes WebSocket gateway as a surface hands it to the hub: the upgrade of
// GET /v1/nodes/connect, the loop that looks after the held connections (roles
// that serve the API), and close. Wire it in the nodes surface module:
//
//   const gateway = nodeGateway(api);            // api: NodesSurfaceApi
//   { upgrade: [gateway.upgrade], loops: [...wingLoops, ...gateway.loops], close: gateway.close }
import type { BackgroundLoop, Role, UpgradeMount } from '../../../core/api/index.js';
import type { NodesSurfaceApi } from '../../../core/surfaces/nodes/nodes-api.js';
import { NodeGatewayServer, type NodeGatewayOptions } from './gateway.js';

export { NODE_CONNECTION_SIGNAL, NodeGatewayServer, type NodeGatewayOptions } from './gateway.js';

/** The path companions connect to. */
export const NODE_CONNECT_PATH = '/v1/nodes/connect';

/** Where upgrades are served (adapters/http serves them on the API's listener). */
const API_ROLES: readonly Role[] = ['api', 'all'];

export interface NodeGateway {
  upgrade: UpgradeMount;
  loops: BackgroundLoop[];
  /** Closes every connection (1001) and hands the leases back; the loop's stop does the same. */
  close(): Promise<void>;
  /** The server itself, for tests and the bench. */
  server: NodeGatewayServer;
}

export function nodeGateway(api: NodesSurfaceApi, options: NodeGatewayOptions = {}): NodeGateway {
  const server = new NodeGatewayServer(api, options);
  return {
    server,
    upgrade: { path: NODE_CONNECT_PATH, handle: (req, socket, head) => server.handle(req, socket, head) },
    // An intake: stopped first, while the store is open, so results in flight are recorded.
    loops: [{ name: 'node-gateway', roles: API_ROLES, intake: true, start: () => server.start(), stop: () => server.stop() }],
    close: () => server.stop(),
  };
}
