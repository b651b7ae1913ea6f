// Runs one allowed command as its own process group (detached), so a timeout,
// a cancel or the companion's shutdown can stop everything it started: TERM to
// the group, KILL after the grace, and "confirmed" only once no process of the
// group is left. Output beyond the limit is dropped and flagged.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeFailure } from '../../../generated/protocol-schemas.js';
import type { NodeCommandResult } from '../../../generated/schemas.js';
import type { RunSpec } from './policy.js';

/** The companion's variables a command inherits; everything else it gets is a name the operator allowed. */
const BASE_ENV_NAMES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
/** After the main process exits, how long its output pipes may stay open (a background child holding them). */
const DRAIN_MS = 1_000;
/** After KILL, how long to watch for the group to be gone before saying it is not confirmed. */
const KILL_CONFIRM_MS = 2_000;

export interface ExecOutcome {
  result: NodeCommandResult;
  canceled: boolean;
  /** When it was stopped (cancel, timeout, shutdown): whether the whole group was seen gone. */
  terminationConfirmed?: boolean;
  /** It never started; a message without paths. */
  startFailure?: string;
  /** It ended with this failure instead of a result (a workspace command the node's rules refused). */
  failure?: NodeFailure;
}

export interface RunningProcess {
  /** The process group id (the leader's pid), or null when it never started. */
  pid: number | null;
  done: Promise<ExecOutcome>;
  /** TERM, then KILL after the grace; resolves with whether the group is gone. */
  cancel(): Promise<boolean>;
}

export function baseEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BASE_ENV_NAMES) if (source[name] !== undefined) env[name] = source[name]!;
  env.PATH ??= DEFAULT_PATH;
  return env;
}

/** What a command that never started produced. */
export const EMPTY_RESULT: NodeCommandResult = { exit_code: null, signal: null, timed_out: false, stdout: '', stderr: '', truncated: false };

export function startProcess(spec: RunSpec, graceMs: number): RunningProcess {
  if (!existsSync(spec.cwd)) {
    const done = Promise.resolve({ result: EMPTY_RESULT, canceled: false, startFailure: "the working scope's directory does not exist on the node" });
    return { pid: null, done, cancel: async () => true };
  }
  const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: { ...baseEnv(), ...spec.env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid ?? null;
  const output = new OutputCap(spec.outputLimitBytes);
  child.stdout.on('data', (chunk: Buffer) => output.add('stdout', chunk));
  child.stderr.on('data', (chunk: Buffer) => output.add('stderr', chunk));

  let canceled = false;
  let timedOut = false;
  let stopping: Promise<boolean> | null = null;
  const groupGone = (): boolean => {
    if (pid === null) return true;
    try {
      process.kill(-pid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH';
    }
  };
  const signalGroup = (signal: NodeJS.Signals): void => {
    if (pid === null) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  };
  const stop = (): Promise<boolean> =>
    (stopping ??= (async () => {
      signalGroup('SIGTERM');
      for (const deadline = Date.now() + graceMs; !groupGone() && Date.now() < deadline;) await sleep(50);
      if (!groupGone()) signalGroup('SIGKILL');
      for (const deadline = Date.now() + KILL_CONFIRM_MS; !groupGone() && Date.now() < deadline;) await sleep(20);
      return groupGone();
    })());
  const timer = setTimeout(() => {
    timedOut = true;
    void stop();
  }, spec.timeoutMs);

  const done = new Promise<ExecOutcome>((resolve) => {
    let drain: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = async (code: number | null, signal: NodeJS.Signals | null, startFailure?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drain);
      const terminationConfirmed = stopping ? await stopping : undefined;
      const { stdout, stderr, truncated } = output.text();
      const result: NodeCommandResult = { exit_code: code, signal, timed_out: timedOut, stdout, stderr, truncated };
      resolve({ result, canceled, ...(terminationConfirmed === undefined ? {} : { terminationConfirmed }), ...(startFailure ? { startFailure } : {}) });
    };
    child.once('error', (error: NodeJS.ErrnoException) => void finish(null, null, `the command could not start (${error.code ?? 'error'})`));
    child.once('exit', (code, signal) => {
      drain = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        void finish(code, signal);
      }, DRAIN_MS);
    });
    child.once('close', (code, signal) => void finish(code, signal));
  });

  return {
    pid,
    done,
    cancel: () => {
      canceled = true;
      return stop();
    },
  };
}

/** stdout and stderr together up to a byte limit; what is past it is dropped. */
class OutputCap {
  private readonly chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  private used = 0;
  private truncated = false;

  constructor(private readonly limit: number) {}

  add(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const room = this.limit - this.used;
    if (chunk.length > room) this.truncated = true;
    const kept = chunk.length > room ? chunk.subarray(0, Math.max(room, 0)) : chunk;
    if (kept.length === 0) return;
    this.chunks[stream].push(kept);
    this.used += kept.length;
  }

  text(): { stdout: string; stderr: string; truncated: boolean } {
    return { stdout: decode(this.chunks.stdout), stderr: decode(this.chunks.stderr), truncated: this.truncated };
  }
}

/** UTF-8 (a character cut at the limit becomes U+FFFD); NUL, which the hub's store cannot hold, becomes U+FFFD too. */
const decode = (chunks: Buffer[]): string => Buffer.concat(chunks).toString('utf8').replaceAll('\u0000', '\uFFFD');

/** The result cut further so its JSON fits in `maxBytes` (escapes can make JSON far larger than the output). */
export function fitResult(result: NodeCommandResult, maxBytes: number): NodeCommandResult {
  let fitted = result;
  while (Buffer.byteLength(JSON.stringify(fitted), 'utf8') > maxBytes && (fitted.stdout.length > 0 || fitted.stderr.length > 0)) {
    fitted = { ...fitted, stdout: halve(fitted.stdout), stderr: halve(fitted.stderr), truncated: true };
  }
  return fitted;
}

/** The first half of a string, never splitting a surrogate pair. */
function halve(text: string): string {
  let end = Math.floor(text.length / 2);
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}
