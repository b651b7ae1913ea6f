// The rows of the nodes wing's tables and the API's views of them. A node's
// state is derived, once, in SQL (NODE_STATE_SQL), so a list filtered by state
// and a node's own view agree.
import type {
  Node,
  NodeCatalog,
  NodeCommandDescriptor,
  NodeCommandResult,
  NodeEnrollment,
  NodeFailureCode,
  NodeInvocation,
  NodeInvocationState,
  NodeState,
} from '../../../generated/schemas.js';
import type { NodeExecutionPlan } from '../../../generated/protocol-schemas.js';
import { unixSeconds } from '../../json.js';
import { descriptorHash, descriptorHashes } from './wire/catalog.js';
import { boundedMessage, nodeError } from './node-calls-port.js';
import { HEARTBEAT_MS } from './wire/limits.js';

export interface EnrollmentRow {
  id: string;
  project_id: string;
  name: string | null;
  max_uses: number;
  uses: number;
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
}

export interface NodeRow {
  id: string;
  project_id: string;
  public_key: string;
  display_name: string | null;
  platform: string;
  architecture: string;
  client_version: string;
  protocol_version: number;
  catalog: NodeCatalog;
  catalog_hash: string;
  allowed_commands: string[];
  approved_catalog_hash: string | null;
  approved_descriptors: Record<string, string>;
  /** The catalog as approved (null for nodes approved before it was kept). */
  approved_catalog: NodeCatalog | null;
  approved_at: Date | null;
  revoked_at: Date | null;
  revocation_reason: string | null;
  connected_at: Date | null;
  last_seen_at: Date | null;
  disconnect_reason: string | null;
  created_at: Date;
  /** Derived (NODE_STATE_SQL). */
  state: NodeState;
  /** In the operator's order. */
  aliases: string[];
}

export interface InvocationRow {
  id: string;
  project_id: string;
  node_id: string;
  response_id: string;
  call_id: string;
  command: string;
  plan: NodeExecutionPlan;
  plan_hash: string;
  state: NodeInvocationState;
  expires_at: Date;
  dispatched_at: Date | null;
  completed_at: Date | null;
  exit_code: number | null;
  result: NodeCommandResult | null;
  failure_code: NodeFailureCode | null;
  failure_message: string | null;
  termination_confirmed: boolean | null;
  created_at: Date;
}

/** A connection silent for three heartbeats is gone, even when its process died before saying so. */
const LIVE_WINDOW_SECONDS = (3 * HEARTBEAT_MS) / 1000;

/** A node's state, over a `nodes` row aliased `n`. */
export const NODE_STATE_SQL = `CASE
  WHEN n.revoked_at IS NOT NULL THEN 'revoked'
  WHEN n.approved_at IS NULL THEN 'pending_pairing'
  WHEN n.connected_at IS NULL OR n.last_seen_at IS NULL OR n.last_seen_at < now() - make_interval(secs => ${LIVE_WINDOW_SECONDS}) THEN 'disconnected'
  WHEN n.catalog_hash IS DISTINCT FROM n.approved_catalog_hash THEN 'degraded'
  ELSE 'connected' END`;

/** Every column of a node, its state and its aliases in order: `SELECT ${NODE_COLUMNS} FROM nodes n`. */
export const NODE_COLUMNS = `n.*, ${NODE_STATE_SQL} AS state,
  coalesce((SELECT array_agg(a.alias ORDER BY a.position, a.alias) FROM node_aliases a WHERE a.node_id = n.id), '{}') AS aliases`;

/** The approved descriptors whose hash is still the approved one, in catalog order. */
export function usableDescriptors(
  row: Pick<NodeRow, 'catalog' | 'allowed_commands' | 'approved_descriptors' | 'revoked_at' | 'approved_at'>,
): NodeCommandDescriptor[] {
  if (row.revoked_at || !row.approved_at) return [];
  const allowed = new Set(row.allowed_commands);
  return row.catalog.commands.filter((d) => allowed.has(d.name) && row.approved_descriptors[d.name] === descriptorHash(d));
}

/** What the advertised catalog added, dropped or changed against the approved descriptors (none before an approval). */
export function catalogChanges(row: Pick<NodeRow, 'catalog' | 'approved_catalog' | 'approved_descriptors' | 'approved_at'>): Node['catalog_changes'] {
  if (!row.approved_at) return { added: [], removed: [], changed: [] };
  const approved = row.approved_catalog ? descriptorHashes(row.approved_catalog) : (row.approved_descriptors ?? {});
  const now = new Map(row.catalog.commands.map((d) => [d.name, descriptorHash(d)]));
  return {
    added: [...now.keys()].filter((name) => !(name in approved)),
    removed: Object.keys(approved).filter((name) => !now.has(name)),
    changed: [...now].filter(([name, hash]) => name in approved && approved[name] !== hash).map(([name]) => name),
  };
}

export const nodeView = (row: NodeRow): Node => ({
  id: row.id,
  object: 'node',
  aliases: row.aliases,
  display_name: row.display_name,
  state: row.state,
  platform: row.platform,
  architecture: row.architecture,
  client_version: row.client_version,
  protocol_version: row.protocol_version,
  catalog: row.catalog,
  catalog_hash: row.catalog_hash,
  approved_catalog_hash: row.approved_catalog_hash,
  allowed_commands: row.allowed_commands,
  usable_commands: usableDescriptors(row).map((d) => d.name),
  catalog_changes: catalogChanges(row),
  last_seen_at: unixSeconds(row.last_seen_at),
  disconnect_reason: row.disconnect_reason,
  revocation_reason: row.revocation_reason,
  created_at: unixSeconds(row.created_at)!,
});

export function enrollmentStatus(row: EnrollmentRow, now = new Date()): NodeEnrollment['status'] {
  if (row.revoked_at) return 'revoked';
  if (row.expires_at <= now) return 'expired';
  if (row.uses >= row.max_uses) return 'used_up';
  return 'active';
}

export const enrollmentView = (row: EnrollmentRow): NodeEnrollment => ({
  id: row.id,
  object: 'node_enrollment',
  name: row.name,
  status: enrollmentStatus(row),
  expires_at: unixSeconds(row.expires_at)!,
  max_uses: row.max_uses,
  uses: row.uses,
  revoked_at: unixSeconds(row.revoked_at),
  created_at: unixSeconds(row.created_at)!,
});

export const invocationView = (row: InvocationRow): NodeInvocation => ({
  id: row.id,
  object: 'node_invocation',
  node_id: row.node_id,
  response_id: row.response_id,
  call_id: row.call_id,
  command: row.command,
  state: row.state,
  plan_hash: row.plan_hash,
  exit_code: row.exit_code,
  failure_code: row.failure_code,
  failure_message: row.failure_message,
  termination_confirmed: row.termination_confirmed,
  created_at: unixSeconds(row.created_at)!,
  dispatched_at: unixSeconds(row.dispatched_at),
  completed_at: unixSeconds(row.completed_at),
  expires_at: unixSeconds(row.expires_at)!,
});

export { boundedMessage };

const DEFAULT_MESSAGES: Record<NodeFailureCode, string> = {
  COMMAND_DENIED: 'The node refused the command.',
  COMMAND_UNAVAILABLE: 'The command is not available on this node.',
  EXECUTION_FAILED: 'The command could not be run.',
  IDEMPOTENCY_CONFLICT: 'This call was already prepared with another plan.',
  INVALID_PLAN: 'The node refused the plan.',
  NODE_BUSY: 'The node has too many open invocations.',
  INVOCATION_CANCELED: 'The invocation was canceled.',
  INVOCATION_UNKNOWN: 'The outcome is unknown (the node restarted while the command ran); it is not run again.',
  NODE_UNAVAILABLE: 'The node did not come online before the plan expired; the command was not sent.',
};

export const failureOutput = (code: NodeFailureCode, message?: string | null): string => nodeError(code, message || DEFAULT_MESSAGES[code]);

/** The model's output for an ended invocation: the command's result, or an error; null while it is open. */
export function invocationOutput(row: Pick<InvocationRow, 'state' | 'result' | 'failure_code' | 'failure_message'>): string | null {
  switch (row.state) {
    case 'prepared':
    case 'dispatched':
    case 'accepted':
    case 'running':
      return null;
    case 'succeeded':
    case 'failed':
      if (row.result && !row.failure_code) {
        // A workspace command's answer is its data; an exec command's, its exit code and output.
        if (row.result.data !== undefined) return JSON.stringify(row.result.data);
        const { exit_code, stdout, stderr, truncated } = row.result;
        return JSON.stringify({ exit_code, stdout, stderr, truncated });
      }
      return failureOutput(row.failure_code ?? 'EXECUTION_FAILED', row.failure_message);
    case 'canceled':
      return failureOutput('INVOCATION_CANCELED', row.failure_message);
    case 'unknown':
      return failureOutput('INVOCATION_UNKNOWN', row.failure_message);
    case 'expired':
      return failureOutput('NODE_UNAVAILABLE', row.failure_message);
    default: {
      const never: never = row.state;
      throw new Error(`unknown invocation state ${String(never)}`);
    }
  }
}
