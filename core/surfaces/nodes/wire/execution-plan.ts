// An execution plan's hash, and the checks a node makes before it runs one: the
// hash is the plan's own, the plan is for this node and this catalog, and it
// has not expired (with the tolerated clock skew).
import type { NodeExecutionPlan } from '../../../../generated/protocol-schemas.js';
import { canonicalHash } from './canonical-hash.js';
import { CLOCK_SKEW_MS } from './limits.js';

export type UnhashedPlan = Omit<NodeExecutionPlan, 'plan_hash'>;

export const planHash = (plan: UnhashedPlan): string => canonicalHash(plan);

export function hashedPlan(plan: UnhashedPlan): NodeExecutionPlan {
  return { ...plan, plan_hash: planHash(plan) };
}

/** Why a node must refuse the plan (INVALID_PLAN), or null. */
export function planFault(plan: NodeExecutionPlan, node: { nodeId: string; catalogHash: string }, now: number = Date.now()): string | null {
  const { plan_hash: claimed, ...rest } = plan;
  if (planHash(rest) !== claimed) return 'the plan hash does not match the plan';
  if (plan.node_id !== node.nodeId) return 'the plan is for another node';
  if (plan.catalog_hash !== node.catalogHash) return "the plan was prepared against another catalog than the node's";
  const expires = Date.parse(plan.expires_at);
  if (!Number.isFinite(expires) || expires + CLOCK_SKEW_MS < now) return 'the plan expired';
  const prepared = Date.parse(plan.prepared_at);
  if (!Number.isFinite(prepared) || prepared - CLOCK_SKEW_MS > now) return 'the plan was prepared in the future (clocks apart)';
  return null;
}
