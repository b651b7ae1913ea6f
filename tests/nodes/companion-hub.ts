// A real hub for `palai node run` processes: the test hub (its store, its REST
// API) with the nodes gateway on a real listener, as the hub serves it, that a
// test can stop and start again on the same port (a hub restart, as the
// companion sees it).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { upgradeDispatcher } from '../../adapters/http/upgrade.js';
import { nodeGateway, NODE_CONNECT_PATH, type NodeGateway } from '../../adapters/nodes/gateway/index.js';
import type { NodesSurfaceApi } from '../../core/surfaces/nodes/nodes-api.js';
import { withSlice, type TestHub } from '../support/hub.js';

export class GatewayListener {
  private gateway: NodeGateway | null = null;
  private server: Server | null = null;
  private port = 0;
  readonly api: NodesSurfaceApi;

  constructor(private readonly hub: TestHub) {
    this.api = withSlice(hub.hub, 'nodes');
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}${NODE_CONNECT_PATH}`;
  }

  async start(): Promise<void> {
    const gateway = nodeGateway(this.api, { pollMs: 100 });
    for (const loop of gateway.loops) await loop.start();
    const server = createServer(this.hub.hub.app);
    const upgrade = upgradeDispatcher(this.api, this.hub.hub.app, [gateway.upgrade]);
    if (upgrade) server.on('upgrade', upgrade);
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.gateway = gateway;
    this.server = server;
  }

  /** Closes every node connection (1001) and the listener. */
  async stop(): Promise<void> {
    await this.gateway?.close();
    const server = this.server;
    this.gateway = null;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
