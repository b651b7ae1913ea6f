// The API listener's HTTP Upgrade requests, handed to the surface that serves
// the request's path. Node gives every request carrying `Connection: Upgrade`
// to this listener once it exists, so only WebSocket upgrades go to a surface;
// any other upgrade (a client offering h2c, say) is served as the ordinary
// request it also is, when it has no body. An upgrade nobody serves, or one
// arriving while the process drains, is answered with a plain HTTP status and
// closed — a socket is never left open without an owner. Sockets a surface
// took over are its own to end when the process closes; any still open a
// moment after that are destroyed, so they cannot hold the shutdown.
import { ServerResponse, type IncomingMessage, type RequestListener } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { KernelApi, UpgradeMount } from '../../core/api/index.js';

export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** How long a surface has, once the process closes, to end its upgraded sockets itself. */
const CLOSE_GRACE_MS = 1_000;

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

const hasBody = (req: IncomingMessage): boolean => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** The request as any other, answered by `app` on this socket, which then closes. */
function serveAsUsual(app: RequestListener, req: IncomingMessage, socket: Duplex): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  app(req, res);
}

/** The listener for the mounts, or null when no surface serves upgrades (then Node answers every request as usual). */
export function upgradeDispatcher(api: KernelApi, app: RequestListener, mounts: readonly UpgradeMount[]): UpgradeListener | null {
  if (mounts.length === 0) return null;
  const byPath = new Map(mounts.map((mount) => [mount.path, mount]));
  if (byPath.size !== mounts.length) throw new Error('two surfaces serve upgrades on the same path');
  const taken = new Set<Duplex>();
  api.lifecycle.closing.addEventListener('abort', () => setTimeout(() => taken.forEach((socket) => socket.destroy()), CLOSE_GRACE_MS).unref(), { once: true });
  return (req, socket, head) => {
    // A peer that resets mid-handshake must not become an unhandled error.
    socket.on('error', () => socket.destroy());
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      if (hasBody(req)) return refuse(socket, 400, 'Bad Request');
      return serveAsUsual(app, req, socket);
    }
    const path = (req.url ?? '/').split('?')[0];
    const mount = byPath.get(path);
    if (!mount) return refuse(socket, 404, 'Not Found');
    if (api.lifecycle.draining.aborted) return refuse(socket, 503, 'Service Unavailable');
    taken.add(socket);
    socket.once('close', () => taken.delete(socket));
    try {
      mount.handle(req, socket, head);
    } catch (error) {
      api.logger.error({ err: error, path }, 'an upgrade handler failed');
      if (!socket.destroyed) refuse(socket, 500, 'Internal Server Error');
    }
  };
}
