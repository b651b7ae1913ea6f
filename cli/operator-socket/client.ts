// The command line's end of the operator socket (protocol.ts). It talks only to
// a socket of this user's in a data directory of this user's; anything else, or
// a socket nothing answers on (left by a killed hub), counts as no hub at all,
// and the command opens the store itself.
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { readProcessStdin } from '../commands/context.js';
import { foreignHome, foreignSocket, readMessages, send, socketAddress, socketPath, type HubHello } from './protocol.js';

/** A connection to the hub serving `home`, or null when there is none this user may use. */
function connectToHub(home: string): Promise<Socket | null> {
  const path = socketPath(home);
  const address = socketAddress(path);
  try {
    if (!address || !existsSync(path) || foreignHome(home) || foreignSocket(path)) return Promise.resolve(null);
  } catch {
    return Promise.resolve(null);
  }
  return new Promise((resolve) => {
    const socket = connect(address);
    socket.once('connect', () => {
      socket.off('error', refused);
      resolve(socket);
    });
    const refused = () => resolve(null);
    socket.once('error', refused);
  });
}

/** What the hub holding the embedded store under `home` says about itself, or null when none answers. */
export async function runningHub(home: string): Promise<HubHello | null> {
  const socket = await connectToHub(home);
  if (!socket) return null;
  return new Promise((resolve) => {
    socket.on('error', () => resolve(null));
    socket.once('close', () => resolve(null));
    readMessages(socket, (message) => {
      const { hub } = message as { hub?: HubHello };
      resolve(hub ?? null);
      socket.destroy();
    });
    send(socket, { op: 'hello' });
  });
}

/**
 * Runs the command line in the hub holding the embedded store under `home`:
 * its output goes to this process's stdout and stderr as it comes, and the
 * hub's exit code is returned; null when no hub answers (run it here).
 */
export async function runOnHub(home: string, argv: string[]): Promise<number | null> {
  const socket = await connectToHub(home);
  if (!socket) return null;
  return new Promise((resolve) => {
    let exit: number | null = null;
    const cutOff = (reason: string) => {
      if (exit !== null) return;
      exit = 1;
      process.stderr.write(`palai: the running hub went away before the command finished: ${reason}.\n`);
      resolve(exit);
    };
    socket.on('error', (error) => cutOff(error.message));
    socket.once('close', () => cutOff('connection closed'));
    readMessages(socket, (message) => {
      const answer = message as { [field in 'stdout' | 'stderr' | 'stdin' | 'exit']?: unknown };
      if (typeof answer.stdout === 'string') process.stdout.write(answer.stdout);
      else if (typeof answer.stderr === 'string') process.stderr.write(answer.stderr);
      else if (answer.stdin === true) void readProcessStdin().then((text) => send(socket, { op: 'stdin', text }));
      else if (typeof answer.exit === 'number' && exit === null) {
        exit = answer.exit;
        socket.destroy();
        resolve(exit);
      }
    });
    // The help wraps to this terminal, or to commander's 80 columns when stdout is none, as it would here.
    const helpWidth = process.stdout.isTTY ? process.stdout.columns : 80;
    send(socket, { op: 'run', argv, cwd: process.cwd(), helpWidth });
  });
}
