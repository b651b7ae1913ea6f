// What the WebSocket gateway (adapters/nodes/gateway) asks of the store. The
// gateway verifies a hello's proof itself (wire/node-identity.ts) and holds
// each node's live connection under a cluster lease (`nodes.connection:<id>`);
// the store admits the identity, hands it the plans to send and records what
// the node answered — answering the response's parked call in the same
// transaction as the ledger's outcome.
//
// Glossary
//   admission   a verified identity let in: found by its key, or enrolled with
//               its token as `pending_pairing`
//   usable      an approved command whose descriptor hash is the approved one
//   dispatch    prepared → dispatched by the process that holds the connection
//   re-send     after a reconnect, the node's dispatched, accepted and running
//               invocations are sent again with the same plan: the companion's
//               own ledger answers them from its record, never runs them twice
//
// Reading order: this file, node-calls-port.ts, then nodes-api.ts.
import type { NodeExecutionPlan, NodeIdentityProof, NodeInvokeResultFrame } from '../../../generated/protocol-schemas.js';
import type { NodeState } from '../../../generated/schemas.js';

/** The signals the wing sends (core/signals): payload the node id. */
export const NODE_SIGNALS = {
  /** An invocation was prepared, or a cancel requested: its node's holder should look now. */
  work: 'nodes.work',
  /** The node was approved, denied or revoked: its holder re-reads its admission. */
  changed: 'nodes.changed',
} as const;

/** The cluster lease key of a node's live connection. */
export const nodeConnectionLease = (nodeId: string): string => `nodes.connection:${nodeId}`;

/** A node let in, as its connection needs it. */
export interface NodeAdmission {
  nodeId: string;
  projectId: string;
  state: NodeState;
  /** What the operator approved. */
  allowedCommands: string[];
  /** The approved commands whose descriptor is unchanged. */
  usableCommands: string[];
  approvedCatalogHash: string | null;
}

/** A refused hello: the close code (wire/close-codes.ts) and a message for the node's log. Nothing was written. */
export class NodeAdmissionRefused extends Error {
  constructor(
    readonly closeCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'NodeAdmissionRefused';
  }
}

export interface NodeGatewayPort {
  /**
   * Lets a verified identity in: an existing node by its key (its catalog,
   * platform and version updated; `degraded` when the catalog is not the
   * approved one), or a new one enrolled with `enrollmentToken` as
   * `pending_pairing` (the token's use counted). Throws NodeAdmissionRefused:
   * revoked (4403), unknown without a usable token (4412), the project's
   * pending pairings full (4429).
   */
  admit(proof: NodeIdentityProof, enrollmentToken: string | undefined): Promise<NodeAdmission>;
  /** The node's admission now (after an approval or a revocation), or null when it is gone. */
  admission(nodeId: string): Promise<NodeAdmission | null>;
  /** The connection is up (connected_at, last_seen_at) / still up / gone, with why. */
  connected(nodeId: string): Promise<void>;
  seen(nodeId: string): Promise<void>;
  disconnected(nodeId: string, reason: string): Promise<void>;
  /**
   * The plans to send to these nodes, which this process holds: every
   * prepared one still in its time to live, whose response has not ended and
   * whose cancel was not asked, becomes dispatched by `holder`; with
   * `resend`, also those already dispatched, accepted or running.
   */
  claimDispatch(nodeIds: readonly string[], holder: string, options: { resend: boolean }): Promise<NodeExecutionPlan[]>;
  /** The node accepted the plan (dispatched → running). */
  accepted(nodeId: string, invocationId: string): Promise<void>;
  /**
   * Records how an invocation ended and answers its parked call, in one
   * transaction (`recorded`). A second result for it changes nothing
   * (`repeated`); one whose plan hash is not the invocation's is ignored (`refused`).
   */
  finished(nodeId: string, result: NodeInvokeResultFrame): Promise<'recorded' | 'repeated' | 'refused'>;
  /** Sent invocations of these nodes to stop: their cancel was asked or their response ended. */
  toCancel(nodeIds: readonly string[]): Promise<string[]>;
  /**
   * Ends the prepared invocations whose time to live passed (expired,
   * NODE_UNAVAILABLE) and the ones cancelled before they were sent, answering
   * their calls; the count. Any process may run it.
   */
  sweep(): Promise<number>;
  /** Removes ended invocations past PALAI_NODE_LEDGER_RETENTION_HOURS, in batches; the count. */
  purge(): Promise<number>;
  /**
   * The values of an invocation's secret environment, revealed for one send
   * (they go in the invoke frame beside the plan, never in it); {} when it has
   * none, null when a secret no longer matches the plan (rotated, deleted).
   */
  secretEnv(invocationId: string): Promise<Record<string, string> | null>;
}
