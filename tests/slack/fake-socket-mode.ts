// A local stand-in for Slack's Socket Mode WebSocket server, on 127.0.0.1: the
// URL apps.connections.open answers with. Each connection is greeted with
// `hello` as Slack does; a test sends envelopes down a connection and reads
// what the client sends back (its acks). The WebSocket framing (RFC 6455) is
// written out here, small as it is, so the stand-in needs no library.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FakeSocketConnection {
  /** The request path and query it connected with. */
  path: string;
  /** Every message the client sent, parsed. */
  received: Record<string, unknown>[];
  readonly closed: boolean;
  send(message: unknown): void;
  /** The client's acknowledgement of an envelope, once it arrives. */
  ack(envelopeId: string, timeoutMs?: number): Promise<Record<string, unknown>>;
}

export interface FakeSocketMode {
  /** A ws:// URL to this server (as apps.connections.open answers), with a ticket query as Slack's has. */
  url(host?: string): string;
  /** Every connection ever accepted, in order. */
  connections: FakeSocketConnection[];
  open(): FakeSocketConnection[];
  close(): Promise<void>;
}

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function frame(opcode: number, payload: Buffer): Buffer {
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x80 | opcode, length]) : length < 65_536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (length >= 126) {
    header[0] = 0x80 | opcode;
    header[1] = length < 65_536 ? 126 : 127;
    if (length < 65_536) header.writeUInt16BE(length, 2);
    else header.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([header, payload]);
}

/** Reads the client's (masked) frames off the socket, calling `onFrame` for each. */
function readFrames(socket: Socket, first: Buffer, onFrame: (opcode: number, payload: Buffer) => void): void {
  let buffer = first;
  const drain = () => {
    for (;;) {
      if (buffer.length < 2) return;
      const opcode = buffer[0] & 0x0f;
      let length = buffer[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const masked = (buffer[1] & 0x80) !== 0;
      const end = offset + (masked ? 4 : 0) + length;
      if (buffer.length < end) return;
      const payload = Buffer.from(buffer.subarray(end - length, end));
      if (masked) for (let i = 0; i < payload.length; i++) payload[i] ^= buffer[offset + (i % 4)];
      buffer = buffer.subarray(end);
      onFrame(opcode, payload);
    }
  };
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    drain();
  });
  drain();
}

function accept(req: IncomingMessage, socket: Socket, head: Buffer, connections: FakeSocketConnection[]): void {
  const key = String(req.headers['sec-websocket-key'] ?? '');
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      `Sec-WebSocket-Accept: ${createHash('sha1')
        .update(key + GUID)
        .digest('base64')}\r\n\r\n`,
  );
  let closed = false;
  const received: Record<string, unknown>[] = [];
  const write = (opcode: number, payload: Buffer) => void (!closed && socket.write(frame(opcode, payload)));
  const connection: FakeSocketConnection = {
    path: req.url ?? '',
    received,
    get closed() {
      return closed;
    },
    send: (message) => write(0x1, Buffer.from(JSON.stringify(message))),
    async ack(envelopeId, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = received.find((m) => m.envelope_id === envelopeId);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no ack of envelope ${envelopeId}`);
        await sleep(20);
      }
    },
  };
  socket.on('close', () => void (closed = true));
  socket.on('error', () => undefined);
  readFrames(socket, head, (opcode, payload) => {
    if (opcode === 0x1) received.push(JSON.parse(payload.toString('utf8')) as Record<string, unknown>);
    else if (opcode === 0x9) write(0xa, payload);
    else if (opcode === 0x8) {
      write(0x8, payload.subarray(0, 2));
      closed = true;
      socket.end();
    }
  });
  connections.push(connection);
  connection.send({ type: 'hello', num_connections: connections.filter((c) => !c.closed).length, connection_info: { app_id: 'A0APP' } });
}

export async function startFakeSocketMode(): Promise<FakeSocketMode> {
  const connections: FakeSocketConnection[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => res.writeHead(426).end());
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    accept(req, socket, head, connections);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let tickets = 0;
  return {
    url: (host = '127.0.0.1') => `ws://${host}:${port}/link/?ticket=fake-ticket-${++tickets}-secret&app_id=A0APP`,
    connections,
    open: () => connections.filter((c) => !c.closed),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
