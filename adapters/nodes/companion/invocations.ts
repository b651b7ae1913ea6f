// What the companion does with each `invoke` and `invoke.cancel` the hub sends.
// The order is the promise: a plan's own hash and node first; then the ledger
// (a re-send is answered from the record, never run again — even after the plan
// expired); only a plan never seen is checked for expiry, catalog and local
// policy, recorded `running`, accepted, run, and answered.
import { secretDigest } from '../../../core/surfaces/nodes/wire/secret-digest.js';
import { markSecrets } from '../../../core/surfaces/nodes/wire/secret-marker.js';
import type { NodeCompanionFrame, NodeExecutionPlan, NodeFailure, NodeInvokeResultFrame } from '../../../generated/protocol-schemas.js';
import type { NodeCatalog, NodeFailureCode } from '../../../generated/schemas.js';
import { planFault, planHash } from '../../../core/surfaces/nodes/wire/execution-plan.js';
import { CLOCK_SKEW_MS, MAX_FAILURE_MESSAGE, MAX_FRAME_BYTES, MAX_PLAN_TTL_MS } from '../../../core/surfaces/nodes/wire/limits.js';
import type { CompanionConfig } from './config.js';
import { EMPTY_RESULT, startProcess, fitResult, type ExecOutcome, type RunningProcess } from './exec.js';
import { resultFrameOf, type Ledger, type LedgerOutcome } from './ledger.js';
import { authorize } from './policy.js';
import { startWorkspace } from './workspace-run.js';

/** Room left in a frame for everything but the output. */
const FRAME_MARGIN_BYTES = 16 * 1024;

export interface InvocationsOptions {
  nodeId: string;
  config: CompanionConfig;
  catalog: NodeCatalog;
  catalogHash: string;
  ledger: Ledger;
  defaultDirectory: string;
  /** The commands the hub last said were approved. */
  approvedCommands: () => readonly string[];
  /** Notes for the companion's log (no secrets, no output). */
  log?: (line: string) => void;
  now?: () => number;
}

type Send = (frame: NodeCompanionFrame) => void;

export class Invocations {
  private readonly running = new Map<string, { key: string; process: RunningProcess; finished: Promise<void> }>();
  /** Cancels of invocations not seen yet, by id: when each came (kept a plan's life). */
  private readonly cancelledUnseen = new Map<string, number>();
  private send: Send | null = null;
  private draining = false;

  constructor(private options: InvocationsOptions) {}

  /** A reloaded config: plans from now on are checked against it (running commands keep theirs). */
  reconfigure(config: CompanionConfig, catalog: NodeCatalog, catalogHash: string): void {
    this.options = { ...this.options, config, catalog, catalogHash };
  }

  /** Where answers go: the current connection, or null while there is none (a re-send after reconnecting gets them). */
  connect(send: Send | null): void {
    this.send = send;
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** Nothing new is run from now on; re-sends are still answered. */
  stopTaking(): void {
    this.draining = true;
  }

  /** Until every running command ended (and was recorded). */
  async whenIdle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.finished));
  }

  /** Stops every running command (TERM, KILL after the grace) and waits for their records. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.process.cancel()));
    await this.whenIdle();
  }

  /** Handles one invoke; resolves once it was answered (for a run: once the command ended). */
  async invoke(plan: NodeExecutionPlan, secrets: Record<string, string> = {}): Promise<void> {
    const { plan_hash: claimed, ...unhashed } = plan;
    if (planHash(unhashed) !== claimed) return this.refuse(plan, 'INVALID_PLAN', 'the plan hash does not match the plan');
    if (plan.node_id !== this.options.nodeId) return this.refuse(plan, 'INVALID_PLAN', 'the plan is for another node');

    const record = this.options.ledger.get(plan.idempotency_key);
    if (record) {
      if (record.plan_hash !== plan.plan_hash) {
        return this.refuse(plan, 'IDEMPOTENCY_CONFLICT', 'this call was already sent with another plan; it is not run again');
      }
      if (record.state === 'running') {
        this.emit({ type: 'invoke.accepted', invocation_id: record.invocation_id });
        return this.running.get(record.invocation_id)?.finished;
      }
      this.emit(resultFrameOf(record));
      return;
    }
    if (this.cancelledUnseen.delete(plan.invocation_id)) {
      this.options.log?.(`${plan.invocation_id}: cancelled before it came; not run`);
      this.emit({
        type: 'invoke.result',
        invocation_id: plan.invocation_id,
        plan_hash: plan.plan_hash,
        state: 'canceled',
        failure: failure('INVOCATION_CANCELED', 'the invocation was cancelled before the node got it; it was not run'),
        termination_confirmed: true,
      });
      return;
    }
    if (this.draining) return this.refuse(plan, 'NODE_UNAVAILABLE', 'the node is shutting down; the command was not run');
    const now = this.options.now?.() ?? Date.now();
    const fault = planFault(plan, { nodeId: this.options.nodeId, catalogHash: this.options.catalogHash }, now);
    if (fault) return this.refuse(plan, 'INVALID_PLAN', fault);
    const verdict = authorize(plan, {
      config: this.options.config,
      catalog: this.options.catalog,
      approvedCommands: this.options.approvedCommands(),
      defaultDirectory: this.options.defaultDirectory,
    });
    if (!verdict.ok) return this.refuse(plan, verdict.failure.code, verdict.failure.message);
    // The plan's secret environment, from the values sent beside it: each the one it was bound to, of a name the node allows.
    const secretEnv = bindSecretEnv(plan, secrets, this.options.config.shell.environmentNames);
    if ('failure' in secretEnv) return this.refuse(plan, secretEnv.failure.code, secretEnv.failure.message);
    if (Object.keys(secretEnv.env).length > 0 && !('spec' in verdict)) return this.refuse(plan, 'INVALID_PLAN', 'only exec commands take a secret environment');
    const run = 'spec' in verdict ? { ...verdict, spec: { ...verdict.spec, env: { ...verdict.spec.env, ...secretEnv.env } } } : verdict;

    // Recorded before anything starts: from here on, this key is never run again.
    this.options.ledger.begin(plan);
    this.emit({ type: 'invoke.accepted', invocation_id: plan.invocation_id });
    let child: RunningProcess;
    try {
      child = 'workspace' in run ? startWorkspace(run.workspace) : startProcess(run.spec, this.options.config.policy.graceSeconds * 1000);
    } catch (error) {
      // spawn refused its arguments outright: nothing started, and the record says so.
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      return this.complete(plan, { result: EMPTY_RESULT, canceled: false, startFailure: `the command could not start (${code})` });
    }
    if (child.pid !== null) this.options.ledger.spawned(plan.idempotency_key, child.pid);
    this.options.log?.(`${plan.invocation_id}: ${plan.command} started`);
    const finished = child.done.then((outcome) => this.complete(plan, marked(outcome, secretEnv.env, plan.invocation_id)));
    this.running.set(plan.invocation_id, { key: plan.idempotency_key, process: child, finished });
    return finished;
  }

  /**
   * Stops a running command; an ended one is answered from its record. One never
   * seen is remembered: the hub sends a cancelled plan's cancel before re-sending
   * the plan after a reconnect, and the plan is then refused, never started.
   */
  async cancel(invocationId: string): Promise<void> {
    const running = this.running.get(invocationId);
    if (running) {
      await running.process.cancel();
      return running.finished;
    }
    const record = this.options.ledger.all().find((r) => r.invocation_id === invocationId);
    if (record) {
      if (record.state !== 'running') this.emit(resultFrameOf(record));
      return;
    }
    const now = this.options.now?.() ?? Date.now();
    for (const [id, at] of this.cancelledUnseen) if (at + MAX_PLAN_TTL_MS + CLOCK_SKEW_MS < now) this.cancelledUnseen.delete(id);
    this.cancelledUnseen.set(invocationId, now);
  }

  private complete(plan: NodeExecutionPlan, outcome: ExecOutcome): void {
    const result = fitResult(outcome.result, MAX_FRAME_BYTES - FRAME_MARGIN_BYTES);
    let ended: LedgerOutcome;
    if (outcome.startFailure) ended = { state: 'failed', failure: { code: 'EXECUTION_FAILED', message: outcome.startFailure } };
    else if (outcome.failure) ended = { state: 'failed', failure: failure(outcome.failure.code, outcome.failure.message) };
    else if (outcome.canceled) {
      ended = {
        state: 'canceled',
        result,
        failure: failure('INVOCATION_CANCELED', 'the command was canceled'),
        termination_confirmed: outcome.terminationConfirmed ?? false,
      };
    } else ended = { state: result.exit_code === 0 ? 'succeeded' : 'failed', result };
    const record = this.options.ledger.finish(plan.idempotency_key, ended);
    this.running.delete(plan.invocation_id);
    this.options.log?.(`${plan.invocation_id}: ${plan.command} ${record.state}`);
    this.emit(resultFrameOf(record));
  }

  /** Nothing was run and nothing recorded: the plan was refused. */
  private refuse(plan: NodeExecutionPlan, code: NodeFailureCode, message: string): void {
    this.options.log?.(`${plan.invocation_id}: refused (${code}): ${message}`);
    const frame: NodeInvokeResultFrame = {
      type: 'invoke.result',
      invocation_id: plan.invocation_id,
      plan_hash: plan.plan_hash,
      state: 'failed',
      failure: failure(code, message),
    };
    this.emit(frame);
  }

  private emit(frame: NodeCompanionFrame): void {
    this.send?.(frame);
  }
}

const failure = (code: NodeFailureCode, message: string): NodeFailure => ({ code, message: message.slice(0, MAX_FAILURE_MESSAGE) });

/** An outcome whose output names, never holds, the secret values the command was given: before its ledger and the hub see it. */
function marked(outcome: ExecOutcome, secrets: Record<string, string>, invocationId: string): ExecOutcome {
  if (Object.keys(secrets).length === 0) return outcome;
  const { stdout, stderr, truncated } = outcome.result;
  return {
    ...outcome,
    result: { ...outcome.result, stdout: markSecrets(stdout, secrets, invocationId, truncated), stderr: markSecrets(stderr, secrets, invocationId, truncated) },
  };
}

/**
 * The values of a plan's secret environment: each sent beside the plan, of the
 * digest and length the plan binds, under a name the node's config allows.
 * Nothing here is logged or recorded; a refusal names only the variable.
 */
function bindSecretEnv(
  plan: NodeExecutionPlan,
  secrets: Record<string, string>,
  allowed: readonly string[],
): { env: Record<string, string> } | { failure: NodeFailure } {
  const env: Record<string, string> = {};
  for (const { name, digest, length } of plan.secret_env ?? []) {
    if (!allowed.includes(name)) return { failure: failure('COMMAND_DENIED', `the environment name ${name} is not one the node allows`) };
    const value = secrets[name];
    const matches = typeof value === 'string' && value.length === length && secretDigest(value) === digest;
    if (!matches) return { failure: failure('INVALID_PLAN', `the value sent for ${name} is not the one the plan was made with`) };
    if (value.includes('\u0000')) return { failure: failure('INVALID_PLAN', `the value of ${name} holds a NUL character`) };
    env[name] = value;
  }
  return { env };
}
