// A TCP load balancer in front of several hub processes, as a deployment puts
// one in front of its API: each new connection goes to the first upstream that
// accepts it, so a companion node reconnecting after its hub was SIGKILLed
// reaches a surviving hub at the same address.
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

export class TcpBalancer {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private upstreams: number[],
  ) {}

  /** Listens on 127.0.0.1 (a free port) for upstreams on 127.0.0.1 at `ports`, in order of preference. */
  static async start(ports: number[]): Promise<TcpBalancer> {
    let balancer: TcpBalancer | null = null;
    const server = createServer((client) => balancer!.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    balancer = new TcpBalancer(server, (server.address() as AddressInfo).port, ports);
    return balancer;
  }

  /** Replaces the upstreams (a hub started later, on a port known only then). */
  route(ports: number[]): void {
    this.upstreams = ports;
  }

  private accept(client: Socket): void {
    this.track(client);
    client.on('error', () => undefined);
    client.pause();
    this.connect(client, [...this.upstreams]);
  }

  private connect(client: Socket, candidates: number[]): void {
    const port = candidates.shift();
    if (port === undefined || client.destroyed) {
      client.resetAndDestroy();
      return;
    }
    const upstream = new Socket();
    let connected = false;
    upstream.on('error', () => {
      if (connected) client.resetAndDestroy();
      else this.connect(client, candidates);
    });
    upstream.connect(port, '127.0.0.1', () => {
      connected = true;
      this.track(upstream);
      client.on('error', () => upstream.resetAndDestroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
