// The API listener's HTTP Upgrade requests (WebSockets), handed to the surface
// that serves the request's path. An upgrade nobody serves, or one arriving
// while the process drains, is answered with a plain HTTP status and closed —
// the socket is never left open without an owner.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { KernelApi, UpgradeMount } from '../../core/api/index.js';

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

export function upgradeDispatcher(api: KernelApi, mounts: readonly UpgradeMount[]): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const byPath = new Map(mounts.map((mount) => [mount.path, mount]));
  if (byPath.size !== mounts.length) throw new Error('two surfaces serve upgrades on the same path');
  return (req, socket, head) => {
    // A peer that resets mid-handshake must not become an unhandled error.
    socket.on('error', () => socket.destroy());
    const path = (req.url ?? '/').split('?')[0];
    const mount = byPath.get(path);
    if (!mount) return refuse(socket, 404, 'Not Found');
    if (api.lifecycle.draining.aborted) return refuse(socket, 503, 'Service Unavailable');
    try {
      mount.handle(req, socket, head);
    } catch (error) {
      api.logger.error({ err: error, path }, 'an upgrade handler failed');
      if (!socket.destroyed) refuse(socket, 500, 'Internal Server Error');
    }
  };
}
