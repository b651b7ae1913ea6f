// The operator socket: a Unix domain socket in the embedded store's data
// directory (PALAI_HOME/palai.sock), on which `palai serve` runs the store
// commands of `palai` processes that cannot open the store it holds.
//
// Wire: newline-delimited JSON, one connection per request.
//   client → hub   {"op":"hello"}                       → hub: {"hub":{pid, api}}, then closes
//                  {"op":"run","argv":[…],"cwd":"/…","helpWidth":n}  → hub: {"stdout"|"stderr": text}…, {"exit": n}
//                  {"op":"stdin","text":"…"}             the client's whole stdin, once the hub asked for it
//   hub → client   {"stdin":true}                        the command reads stdin
// Both ends are the same program; they keep to the same user (a 0600 socket,
// and owner checks by the client), so the messages are checked for shape only.
import { lstatSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Socket } from 'node:net';

export const SOCKET_FILE = 'palai.sock';

/** What a hub says about itself. */
export interface HubHello {
  pid: number;
  /** The API's URL, or null for a hub without the HTTP API (--role worker or consumers). */
  api: string | null;
}

export type ClientMessage = { op: 'hello' } | { op: 'run'; argv: string[]; cwd: string; helpWidth: number } | { op: 'stdin'; text: string };
export type HubMessage = { hub: HubHello } | { stdout: string } | { stderr: string } | { stdin: true } | { exit: number };

/** sun_path holds 108 bytes on Linux and 104 on macOS, NUL included; Node cuts a longer path silently. */
const MAX_SOCKET_PATH_BYTES = 103;
/** No message of this protocol comes near this; a peer sending more is cut off. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export const socketPath = (home: string): string => join(home, SOCKET_FILE);

/** The path to bind or connect to: the absolute one, else the one relative to this process's directory; null when both are too long. */
export function socketAddress(path: string): string | null {
  for (const candidate of [path, relative(process.cwd(), path)]) {
    if (Buffer.byteLength(candidate) <= MAX_SOCKET_PATH_BYTES) return candidate;
  }
  return null;
}

/** This process's user id; null where there is none (Windows, where the socket is not offered). */
export const ownUid = (): number | null => process.getuid?.() ?? null;

/** Why the data directory is not one to offer or use a socket in, or null when it belongs to this user. */
export function foreignHome(home: string): string | null {
  const uid = ownUid();
  if (uid === null) return 'no Unix domain sockets on this platform';
  const owner = statSync(home).uid;
  return owner === uid ? null : `${home} belongs to user ${owner}, not to this user (${uid})`;
}

/** Why the socket at `path` must not be used by this user, or null when it is a socket only this user can reach. */
export function foreignSocket(path: string): string | null {
  const stat = lstatSync(path);
  if (!stat.isSocket()) return `${path} is not a socket`;
  if (stat.uid !== ownUid()) return `${path} belongs to user ${stat.uid}`;
  if ((stat.mode & 0o077) !== 0) return `${path} can be reached by other users (mode ${(stat.mode & 0o777).toString(8)})`;
  return null;
}

export function send(socket: Socket, message: ClientMessage | HubMessage): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
}

/** Calls `onMessage` with each JSON line the peer sends; a line that is not JSON, or too long, ends the connection. */
export function readMessages(socket: Socket, onMessage: (message: unknown) => void): void {
  let buffered = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        socket.destroy(new Error('the peer sent a line that is not JSON'));
        return;
      }
      onMessage(message);
    }
    if (buffered.length > MAX_MESSAGE_BYTES) socket.destroy(new Error('the peer sent an over-long message'));
  });
}
