// What the `node` tool provider (adapters/nodes/node-tools.ts) asks of the
// store. A call prepares one execution plan — idempotent on the call, so a
// takeover after a crash finds the same one — commits it as the call's
// checkpoint, and parks; the gateway's process sends it and answers the call.
import type { NodeCommandDescriptor, NodeFailureCode } from '../../../generated/schemas.js';
import { CLOCK_SKEW_MS, MAX_FAILURE_MESSAGE } from './wire/limits.js';

/** A node's tools for an agent's entry: its usable commands. */
export interface NodeTools {
  nodeId: string;
  /** The name its tools carry: its first alias, else its id. */
  toolAlias: string;
  /** Approved, with the approved descriptor, in catalog order. */
  commands: NodeCommandDescriptor[];
  /**
   * The digest of what the node's operator approved it for: its approved
   * catalog hash and allowed commands. A call approved under one authority
   * runs only under the same.
   */
  authorityDigest: string;
}

export interface NodeCallRequest {
  responseId: string;
  callId: string;
  nodeId: string;
  command: string;
  input: Record<string, unknown>;
  /** The entry's timeout, else the command's maximum; capped by it. */
  timeoutSeconds?: number;
  /** Environment variables the model asked for whose values are project secrets (by id or name): bound in the plan by digest and length. */
  secretEnv?: { name: string; secret: string }[];
  /** The parts of the file profile (paths inside it) an objective's grants confine a workspace call to; the plan carries them to the node. */
  within?: string[];
}

/** A prepared (or found) invocation. */
export interface PreparedNodeCall {
  invocationId: string;
  planHash: string;
  /** Not sent after this. */
  expiresAt: Date;
  timeoutSeconds: number;
  /** The model's output when the invocation ended already (a replay), else null. */
  output: string | null;
}

export interface NodeCallsPort {
  /** The node's usable commands, or null when the project has no such node (or it is revoked). */
  tools(projectId: string, ref: string): Promise<NodeTools | null>;
  /**
   * Prepares the plan for the call, or finds the one prepared for it. A
   * command no longer usable, or the node's 257th open invocation, ends at
   * once: `output` holds the error result (COMMAND_UNAVAILABLE, NODE_BUSY),
   * recorded as a `failed` invocation (no row, and `invocationId` '', only
   * when the node is not the project's). The same call with another node,
   * command or input is IDEMPOTENCY_CONFLICT; the first plan stands.
   */
  prepare(projectId: string, call: NodeCallRequest): Promise<PreparedNodeCall>;
  /** The model's output for an ended invocation, else null. */
  outcome(invocationId: string): Promise<string | null>;
}

/** A failure message as it may cross the boundary (to the model, the REST API, a log). */
export const boundedMessage = (message: string): string => (message.length > MAX_FAILURE_MESSAGE ? `${message.slice(0, MAX_FAILURE_MESSAGE - 1)}…` : message);

/** A call's output for an invocation that did not produce a result: one of the failure codes (docs/nodes.md), never a path or an environment value. */
export const nodeError = (code: NodeFailureCode, message: string): string => JSON.stringify({ error: { code, message: boundedMessage(message) } });

/**
 * How long past a sent plan's expiry plus its timeout the hub still waits for
 * the node's report (its clock skew, its TERM-then-KILL, a reconnect); then the
 * ledger's sweep ends it INVOCATION_UNKNOWN, answering the call. A parked call
 * waits longer than this, so the ledger and the call always agree.
 */
export const REPORT_GRACE_MS = CLOCK_SKEW_MS + 5 * 60_000;
