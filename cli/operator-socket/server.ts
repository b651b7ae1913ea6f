// The hub's end of the operator socket (protocol.ts): `palai serve` on the
// embedded store listens on PALAI_HOME/palai.sock and runs the command lines it
// is sent, in this process, against its own store, with the caller's streams.
// The socket is mode 0600 and only offered in a data directory of this user's;
// one left by a killed process (nothing answers on it) is replaced.
import { chmodSync, existsSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { isAbsolute } from 'node:path';
import { runCommandLine } from '../command-line.js';
import { commandContext, type CommandContext } from '../commands/context.js';
import type { Hub } from '../hub.js';
import { foreignHome, readMessages, send, socketAddress, socketPath, type HubHello } from './protocol.js';

export interface OperatorSocket {
  path: string;
  /**
   * Takes no more commands at once and removes the socket; a connection whose
   * command has not started is closed at once; waits up to `graceMs` for the
   * running ones, then cuts them off.
   */
  close(graceMs: number): Promise<void>;
}

export interface OperatorSocketOptions {
  home: string;
  hub: Hub;
  /** The API's URL once it listens; null for a hub without the HTTP API. */
  apiUrl: () => string | null;
}

/** Opens the socket; throws an Error whose message says why it cannot be offered. */
export async function openOperatorSocket({ home, hub, apiUrl }: OperatorSocketOptions): Promise<OperatorSocket> {
  const reason = foreignHome(home);
  if (reason) throw new Error(reason);
  const path = socketPath(home);
  const address = socketAddress(path);
  if (!address) throw new Error(`its path ${path} is too long for a Unix domain socket; choose a shorter PALAI_HOME`);
  if (existsSync(path)) {
    if (await answers(address)) throw new Error(`another process answers on ${path}`);
    rmSync(path, { force: true });
  }
  const running = new Set<Socket>();
  /** Connections that have not sent their command yet. */
  const idle = new Set<Socket>();
  const server = createServer((socket) => {
    running.add(socket);
    idle.add(socket);
    socket.once('close', () => {
      running.delete(socket);
      idle.delete(socket);
    });
    serveConnection(socket, hub, apiUrl, () => idle.delete(socket));
  });
  await listenPrivately(server, address);
  return {
    path,
    async close(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of idle) socket.destroy();
      const deadline = Date.now() + graceMs;
      while (running.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      for (const socket of running) socket.destroy();
      await closed;
    },
  };
}

/** Binds with a umask that leaves the socket to its owner from the start, then says so in its mode too. */
function listenPrivately(server: Server, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // listen() binds synchronously for a path, so the umask covers exactly the bind.
    const umask = process.umask(0o177);
    try {
      server.listen(address, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
    chmodSync(address, 0o600);
  });
}

/** True when a process accepts connections on the socket; a stale one refuses them (or is no socket at all). */
function answers(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(address);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

function serveConnection(socket: Socket, hub: Hub, apiUrl: () => string | null, onStart: () => void): void {
  const logger = hub.kernel.logger.child({ component: 'operator-socket' });
  socket.on('error', () => undefined);
  let stdinWanted: ((text: string) => void) | null = null;
  let started = false;
  readMessages(socket, (message) => {
    const request = message as { op?: unknown; argv?: unknown; cwd?: unknown; text?: unknown; helpWidth?: unknown };
    if (request.op === 'stdin' && stdinWanted && typeof request.text === 'string') {
      stdinWanted(request.text);
      stdinWanted = null;
      return;
    }
    if (started) return void socket.destroy();
    started = true;
    onStart();
    if (request.op === 'hello') {
      const hello: HubHello = { pid: process.pid, api: apiUrl() };
      send(socket, { hub: hello });
      socket.end();
      return;
    }
    const { argv, cwd } = request;
    if (request.op !== 'run' || !Array.isArray(argv) || !argv.every((word) => typeof word === 'string') || typeof cwd !== 'string' || !isAbsolute(cwd)) {
      send(socket, { stderr: 'palai: the running hub did not understand the request.\n' });
      send(socket, { exit: 1 });
      socket.end();
      return;
    }
    const context = hubContext(socket, hub, cwd, (resolve) => (stdinWanted = resolve));
    const command = argv.slice(0, 2).join(' ');
    const helpWidth = Number.isInteger(request.helpWidth) && (request.helpWidth as number) > 0 ? (request.helpWidth as number) : undefined;
    void runCommandLine(argv as string[], context, { viaHubOnly: true, helpWidth })
      .catch((error: unknown) => {
        logger.error({ err: error, command }, 'an operator command failed unexpectedly');
        return 1;
      })
      .then((code) => {
        logger.info({ command, exitCode: code }, 'ran an operator command');
        send(socket, { exit: code });
        socket.end();
      });
  });
}

/** The hub's settings and store, the caller's streams, stdin and working directory. */
function hubContext(socket: Socket, hub: Hub, cwd: string, awaitStdin: (resolve: (text: string) => void) => void): CommandContext {
  let stdin: Promise<string> | undefined;
  return commandContext({
    write: (stream, text) => send(socket, stream === 'stdout' ? { stdout: text } : { stderr: text }),
    config: () => hub.kernel.config,
    openStore: async () => ({ db: hub.kernel.db, opened: false, close: async () => undefined }),
    readStdin: () =>
      (stdin ??= new Promise((resolve, reject) => {
        const gone = () => reject(new Error('the command line went away before sending its stdin'));
        if (socket.destroyed) return gone();
        awaitStdin(resolve);
        socket.once('close', gone);
        send(socket, { stdin: true });
      })),
    cwd,
  });
}
