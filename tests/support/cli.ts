// Palai as a user runs it: child processes from the repository root, in a
// user's environment. Test files call `cleanUpProcesses` from `after`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// `palai` runs the compiled CLI in dist/; it is brought up to date here too (a
// no-op after `npm test` built it), so a test file run on its own never runs an older build.
execFileSync(process.execPath, ['scripts/build.mjs', '--quiet'], { cwd: ROOT, stdio: 'inherit' });

const children = new Set<ChildProcess>();
const tempDirs: string[] = [];

/** Kills every child still running and removes every temporary directory made here. */
export function cleanUpProcesses(): void {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A fresh temporary directory, removed by `cleanUpProcesses`. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** A user's environment: none of the runner's PALAI_*, PORT or node:test settings leak into the child. */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith('PALAI_') && name !== 'PORT' && !name.startsWith('NODE_TEST'));
  return { ...Object.fromEntries(inherited), PALAI_LOG_LEVEL: 'warn', ...extra };
}

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Rejects when `promise` has not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)))]).finally(
    () => clearTimeout(timer),
  );
}

export interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in stdout; rejects on exit or timeout. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
}

/** Starts `node bin/palai.mjs …` from the repository root, exactly as the README runs it. */
export function startPalai(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, ['bin/palai.mjs', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  void exited.then(() => children.delete(child));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor: (pattern, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = out.match(pattern);
          if (match) done(() => resolve(match));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms; stdout: ${out} stderr: ${err}`))), timeoutMs);
        const onExit = (code: number | null) => done(() => reject(new Error(`palai exited (${code}) before ${pattern}; stdout: ${out} stderr: ${err}`)));
        const done = (settle: () => void) => {
          clearTimeout(timer);
          child.stdout!.off('data', check);
          child.off('exit', onExit);
          settle();
        };
        child.stdout!.on('data', check);
        child.once('exit', onExit);
        check();
      }),
  };
}

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `command` from the repository root to completion, killed after `timeoutMs`; `input`, when given, is its whole stdin. */
export function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, input?: string): Promise<Result> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout: timeoutMs });
  children.add(child);
  child.stdin?.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
}

/** Runs `node bin/palai.mjs …` to completion, killed after `timeoutMs`; `input`, when given, is its whole stdin. */
export function runPalai(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, input?: string): Promise<Result> {
  return runProcess(process.execPath, ['bin/palai.mjs', ...args], env, timeoutMs, input);
}
