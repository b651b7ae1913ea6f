// What a command is given to do its work: where its output goes, its settings,
// the store, and the user's stdin and working directory. A command line run by
// this process gets this process's own (localContext); one sent to the running
// hub over its operator socket gets the hub's settings and store and the
// caller's streams (operator-socket/server.ts). Each command is written once,
// against this.
import { resolve } from 'node:path';
import { loadConfig, type PalaiConfig } from '../../core/config.js';
import type { Db } from '../../core/store/db.js';

export type OutputStream = 'stdout' | 'stderr';

/** The store as a command holds it. */
export interface CommandStore {
  db: Db;
  /** Opened for this command (the command brings its schema up to date); false for the running hub's own store. */
  opened: boolean;
  /** Closes a store opened for this command; leaves the hub's own open. */
  close(): Promise<void>;
}

export interface CommandContext {
  /** Writes text as it is (commander's help and usage messages). */
  write(stream: OutputStream, text: string): void;
  /** One line of results. */
  out(line: string): void;
  /** One line of notes or errors. */
  err(line: string): void;
  /** The settings the command runs with: this process's, or the running hub's. Throws a ConfigError for an invalid setting. */
  config(): PalaiConfig;
  openStore(): Promise<CommandStore>;
  /** All of the user's stdin. */
  readStdin(): Promise<string>;
  /** A path the user typed, against the user's working directory. */
  resolvePath(path: string): string;
  /** The command's exit status when it returns without throwing (0 unless it sets one). */
  exitCode: number;
}

/** The parts a context is made of; `out` and `err` are derived from `write`. */
export type ContextParts = Omit<CommandContext, 'out' | 'err' | 'resolvePath' | 'exitCode'> & { cwd: string };

export function commandContext(parts: ContextParts): CommandContext {
  return {
    ...parts,
    out: (line) => parts.write('stdout', `${line}\n`),
    err: (line) => parts.write('stderr', `${line}\n`),
    resolvePath: (path) => resolve(parts.cwd, path),
    exitCode: 0,
  };
}

/** This process's streams, environment and store. */
export function localContext(): CommandContext {
  let config: PalaiConfig | undefined;
  const loaded = (): PalaiConfig => (config ??= loadConfig());
  return commandContext({
    write: (stream, text) => void process[stream].write(text),
    config: loaded,
    async openStore() {
      // Loaded here, so that commands which never open the store (and the help) skip the drivers' start-up cost.
      const [{ openDb }, { announceNewStore }] = await Promise.all([import('../../core/store/open-db.js'), import('./store.js')]);
      await announceNewStore(loaded());
      const db = await openDb(loaded());
      return { db, opened: true, close: () => db.close() };
    },
    readStdin: readProcessStdin,
    cwd: process.cwd(),
  });
}

/** All of this process's stdin, as text. */
export async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
