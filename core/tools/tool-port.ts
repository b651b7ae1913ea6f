// The tool port: one shape for every tool, whoever provides it. A provider serves
// one `type` of entry in an agent spec's `tools` (built-in, client-side function,
// MCP servers, remote A2A agents, and later companion nodes) and turns an entry
// into runnable tools; the broker only ever sees ResolvedTool. Each call gets its
// idempotency key `<response_id>:<call_id>` so a tool can deduplicate a retry.
//
// Reading order: this file (the contract), tool-registry.ts (how entries find
// their provider), builtin/builtin-provider.ts and function-provider.ts (examples),
// parked-calls.ts (a call that waits for an outside party without a worker).
import type { ConsequenceClass, ToolRisk } from '../../generated/schemas.js';
import type { EgressFetch } from '../egress/egress-port.js';
import type { GateTarget } from './call-gate-port.js';

export type { ToolRisk };

/**
 * What every entry of an agent spec's `tools` (ToolSpec in the generated schemas)
 * has: the `type` naming its provider. A provider is typed by its own generated spec.
 */
export interface ToolSpecEntry {
  readonly type: string;
  readonly name?: string;
  /** The class an objective's call gate gives the entry's calls (over the provider's and the risk's). */
  readonly consequence?: ConsequenceClass;
}

/** What a provider may use while resolving an agent's tools for one response. */
export interface ToolResolveContext {
  projectId: string;
  responseId: string;
  /** The only way a tool or its provider calls out: the kernel's egress-guarded fetch. */
  egress: EgressFetch;
  /** Aborts a resolution that has to ask a remote party (listing a server's tools). */
  signal?: AbortSignal;
}

/**
 * One run of a call. A call runs more than once when its worker died while it
 * ran (the run that takes the response over runs it again: `attempt` > 1), and
 * when it asked the human a resumable question (it runs again with `answer`).
 * A tool that talks to a remote party commits what it must not lose — the
 * remote task's id — with `saveCheckpoint` before it waits, and on a later run
 * finds it in `checkpoint` and resumes from it instead of starting over.
 */
export interface ToolCallContext {
  responseId: string;
  callId: string;
  /** `<response_id>:<call_id>`: the same on every retry of this call. */
  idempotencyKey: string;
  signal: AbortSignal;
  /** Which run of this call this is: 1 on the first, one more on each later run (a retry after a crash, a resumption). */
  attempt: number;
  /** What an earlier run saved with saveCheckpoint, or null. */
  checkpoint: unknown;
  /**
   * Commits `value` on the call's row under the response's lease before it
   * resolves, replacing the earlier checkpoint. Rejects (LeaseLostError) when
   * this worker no longer owns the response: the run is over, stop.
   */
  saveCheckpoint(value: unknown): Promise<void>;
  /** The human's answer when this run resumes a resumable `await_input`; otherwise null. */
  answer: string | null;
  /** What the person who approved this call was shown (its tool's approvalDisplay); null when no approval was asked. */
  approved?: Record<string, unknown> | null;
  /** The parts of a file profile an objective's grants confine this call to (paths relative to it); null or absent: not confined. */
  confinedTo?: readonly string[] | null;
}

/** What running a call produced: a result for the model, or a wait for someone. */
export type ToolOutcome =
  | { kind: 'output'; output: string }
  /** The caller runs this tool (client-side function): wait for its output. */
  | { kind: 'await_client' }
  /**
   * Ask the human (the response waits for input). Their answer becomes the
   * output; with `resume`, the call runs again with it as `context.answer`
   * (and its checkpoint) instead, and its outcome then decides.
   */
  | { kind: 'await_input'; question: string; resume?: boolean }
  /**
   * Wait for an external party (a companion node, another service) without
   * holding a worker: the call is committed as parked, the response is
   * `parked` (or in the caller's wait, when something else waits for the
   * caller too) and the worker's slot is free. The party's surface
   * answers through the kernel API (`responses.answerParkedCall`), and its
   * answer is the call's output; an answer that comes while `run` is still
   * going is kept and ends the call as soon as it parks. When nobody answers
   * within `timeoutMs` (by the store's clock), the kernel commits
   * `timeoutOutput` instead (default: an error result saying so), and a later
   * answer is refused. Save what the party needs to find the call (its id,
   * the remote work's id) with saveCheckpoint before parking.
   */
  | { kind: 'park'; timeoutMs: number; timeoutOutput?: string };

export interface ResolvedTool {
  name: string;
  /**
   * The kind of the provider that resolved it ('builtin', 'function', ...). It
   * labels metrics, so it is never a project's own name.
   */
  kind: string;
  description: string;
  /** JSON Schema of the arguments, as shown to the model. */
  parameters: Record<string, unknown>;
  /** The schema arguments are checked against when it is not `parameters` (an MCP tool's own, under its `$schema`). */
  argumentSchema?: Record<string, unknown>;
  risk: ToolRisk;
  /**
   * The tool entry's own approval rule, over the agent's policy: 'always' asks a
   * human before every call, 'never' before none. Absent, the agent's policy decides.
   */
  approval?: 'always' | 'never';
  /** Server-side tools validate arguments against `parameters` before running. */
  validateArguments: boolean;
  /**
   * Whether this call waits for a human decision by its arguments (a node's
   * workspace profile that its operator said needs approval): true asks,
   * whatever the rules above say; false leaves them to decide.
   */
  approvalOf?(args: unknown): boolean;
  /**
   * What a person approving a call is shown of exactly what will run (a node
   * command: node, command, profile, arguments, the approved descriptor's
   * digest). It is kept with the call and handed back as `context.approved`
   * when the approved call runs, so the tool can refuse when it no longer holds.
   */
  approvalDisplay?(args: unknown): Record<string, unknown>;
  /** The class an objective's call gate gives its calls; absent, it follows from the risk (call-gate-port.ts). */
  consequence?: ConsequenceClass;
  /** What a call acts on, for an objective's resource grants; absent or null, nothing a grant governs. */
  target?(args: unknown): GateTarget | readonly GateTarget[] | null;
  run(args: unknown, context: ToolCallContext): Promise<ToolOutcome>;
}

export interface ToolProvider<S extends ToolSpecEntry = ToolSpecEntry> {
  /** The `type` of the agent spec's tool entries this provider serves. */
  readonly kind: S['type'];
  /**
   * The tools one entry stands for: one for a built-in or a function, all of a
   * server's tools for an MCP entry. Asynchronous because a remote provider may
   * have to list its tools first.
   */
  resolve(spec: S, context: ToolResolveContext): Promise<ResolvedTool[]>;
  /**
   * Checks an entry when an agent is created or updated, without calling out.
   * Null when usable, else what is wrong, worded to follow the entry's pointer.
   */
  validateSpec?(spec: S): string | null;
}

/** What a function name may be for every model provider (OpenAI's rule, the strictest). */
export const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** What a built-in tool is given besides its call: the kernel's services it may use. */
export type BuiltinDeps = Pick<ToolResolveContext, 'egress'>;

/** A tool the hub itself runs. It declares a JSON Schema for its arguments (validated before it runs) and a default risk. */
export interface BuiltinTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  risk: ToolRisk;
  /** What a call acts on, for an objective's resource grants (http_post: the URL's host). */
  target?(args: any): GateTarget | null;
  run(args: any, context: ToolCallContext, deps: BuiltinDeps): Promise<ToolOutcome>;
}

/** A tool failing is a result for the model, not a failure of the response. */
export class ToolError extends Error {
  /** The tool may have acted and the call is not run again (an interrupted, non-idempotent remote call): its outcome is uncertain. */
  readonly uncertain: boolean;
  constructor(message: string, options: { uncertain?: boolean } = {}) {
    super(message);
    this.name = 'ToolError';
    this.uncertain = options.uncertain === true;
  }
}

/**
 * An agent's tools could not be made runnable: no provider for an entry's type,
 * two tools of one name, an entry its provider does not know. The response cannot
 * run as its agent is written.
 */
export class ToolResolutionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolResolutionError';
  }
}
