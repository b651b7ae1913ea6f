// The companion's home directory: its identity (an ed25519 key, made once, kept
// with mode 0600), its state (the hub, whether it is paired, the last admission)
// and its ledger (ledger.ts). The enrollment token is never written here.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeState } from '../../../generated/schemas.js';
import { generateIdentity, identityOf } from '../../../core/surfaces/nodes/wire/node-identity.js';
import { writeFileAtomic } from './atomic-file.js';

export interface NodeIdentity {
  privateKeyPem: string;
  publicKey: string;
  nodeId: string;
}

export interface AdmissionRecord {
  at: string;
  state: NodeState;
  allowed_commands: string[];
  approved_catalog_hash: string | null;
}

export interface CompanionState {
  hub: string | null;
  /** Once an operator approved it: the token is no longer presented. */
  paired: boolean;
  last_admission: AdmissionRecord | null;
}

const EMPTY_STATE: CompanionState = { hub: null, paired: false, last_admission: null };

export const identityPath = (home: string): string => join(home, 'identity.pem');
const statePath = (home: string): string => join(home, 'state.json');
export const ledgerDir = (home: string): string => join(home, 'ledger');

export function ensureHome(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
}

/** The identity in `home`, made on first use. Refuses a key file others can read. */
export function loadOrCreateIdentity(home: string): NodeIdentity {
  ensureHome(home);
  const path = identityPath(home);
  if (!existsSync(path)) {
    const identity = generateIdentity();
    writeFileAtomic(path, identity.privateKeyPem, 0o600);
    chmodSync(path, 0o600);
    return identity;
  }
  return readIdentity(home)!;
}

/** The identity in `home`, or null when there is none yet. */
export function readIdentity(home: string): NodeIdentity | null {
  const path = identityPath(home);
  if (!existsSync(path)) return null;
  if ((statSync(path).mode & 0o077) !== 0) throw new Error(`${path} is readable by others; make it mode 0600 (chmod 600)`);
  const privateKeyPem = readFileSync(path, 'utf8');
  return { privateKeyPem, ...identityOf(privateKeyPem) };
}

export function readState(home: string): CompanionState {
  const path = statePath(home);
  if (!existsSync(path)) return { ...EMPTY_STATE };
  try {
    return { ...EMPTY_STATE, ...(JSON.parse(readFileSync(path, 'utf8')) as Partial<CompanionState>) };
  } catch {
    throw new Error(`${path} is not readable JSON; remove it to start unpaired`);
  }
}

export function writeState(home: string, state: CompanionState): void {
  writeFileAtomic(statePath(home), `${JSON.stringify(state, null, 2)}\n`);
}

const lockPath = (home: string): string => join(home, 'companion.lock');

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user has the pid; it runs.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Holds the home for this process: two companions on one home would share an
 * identity and a ledger, and one could run what the other already ran. A lock
 * left by a process that is gone (SIGKILL) is taken over. The release removes it.
 * Throws, naming the other process, when a live one holds it.
 */
export function lockHome(home: string): () => void {
  ensureHome(home);
  const path = lockPath(home);
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && running(holder)) {
        throw new HomeInUseError(`another palai node run (pid ${holder}) uses the home ${home}; stop it first, or give this one its own --home`);
      }
      rmSync(path, { force: true });
    }
  }
}

export class HomeInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HomeInUseError';
  }
}
