// A TCP proxy in front of PostgreSQL, for fault tests: Palai connects through it,
// and a test cuts every connection with a TCP reset (as a crashed database or a
// dropped network path would), or takes the database "down" (new connections
// are reset at once) and brings it back, or holds the database's replies and
// hands them over at once.
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  /** Each live connection's way back: the database's side and the client's. */
  private readonly replies = new Map<Socket, Socket>();
  private held: Array<{ upstream: Socket; client: Socket; chunks: Buffer[]; keep: (chunk: Buffer) => void }> = [];
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
    // A connection whose replies are held is closed by releaseReplies(), after them.
    upstream.on('close', () => this.held.some((h) => h.upstream === upstream) || client.destroy());
    this.track(client);
    this.track(upstream);
    upstream.connect(port, host, () => {
      client.pipe(upstream);
      upstream.pipe(client);
      this.replies.set(upstream, client);
      upstream.once('close', () => this.replies.delete(upstream));
    });
  }

  /**
   * Holds what the database sends on every live connection until
   * releaseReplies(), which hands each connection's held bytes to its client in
   * one write: messages sent apart (a query's answer, then a FATAL) reach the
   * client in one read, as they do from a busy server.
   */
  holdReplies(): void {
    for (const [upstream, client] of this.replies) {
      const chunks: Buffer[] = [];
      const keep = (chunk: Buffer) => void chunks.push(chunk);
      upstream.unpipe(client);
      upstream.on('data', keep);
      this.held.push({ upstream, client, chunks, keep });
    }
  }

  /** Sends what was held, then lets the replies flow again. */
  releaseReplies(): void {
    for (const { upstream, client, chunks, keep } of this.held.splice(0)) {
      upstream.off('data', keep);
      if (chunks.length > 0) client.write(Buffer.concat(chunks));
      if (upstream.destroyed) client.end();
      else upstream.pipe(client);
    }
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
