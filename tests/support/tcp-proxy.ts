// A TCP proxy in front of PostgreSQL, for fault tests: Palai connects through it,
// and a test cuts every connection with a TCP reset (as a crashed database or a
// dropped network path would), or takes the database "down" (new connections
// are reset at once) and brings it back.
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private down = false;
  /** Connections opened through the proxy so far. */
  connections = 0;
  /** Times resetAll() cut live connections. */
  resets = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const server = createServer((client) => proxy!.accept(client, targetHost, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    proxy = new TcpProxy(server, (server.address() as AddressInfo).port);
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  private accept(client: Socket, host: string, port: number): void {
    client.on('error', () => undefined);
    if (this.down) {
      client.resetAndDestroy();
      return;
    }
    this.connections++;
    const upstream = new Socket();
    upstream.on('error', () => client.resetAndDestroy());
    client.on('error', () => upstream.resetAndDestroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    this.track(client);
    this.track(upstream);
    upstream.connect(port, host, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Cuts every live connection with a TCP RST, both ways. New connections still go through. */
  resetAll(): number {
    const live = this.sockets.size;
    for (const socket of this.sockets) socket.resetAndDestroy();
    this.sockets.clear();
    if (live > 0) this.resets++;
    return live;
  }

  /** The database disappears: live connections are reset and new ones refused until up(). */
  takeDown(): void {
    this.down = true;
    this.resetAll();
  }

  up(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    this.takeDown();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
