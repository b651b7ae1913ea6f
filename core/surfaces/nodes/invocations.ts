// Preparing a node call: one execution plan per `<response_id>:<call_id>`,
// committed before anything is sent (the call's checkpoint), so a takeover
// after a crash finds the same plan. A command no longer usable, or a node
// with too many open invocations, ends at once with an error the model reads.
import { secretDigest } from './wire/secret-digest.js';
import { findProjectSecret } from '../../secrets/project-secrets.js';
import type { SecretStore } from '../../secrets/secret-port.js';
import type { NodeCommandDescriptor, NodeFailureCode } from '../../../generated/schemas.js';
import { newId } from '../../ids.js';
import { notifySignal } from '../../signals/signals.js';
import type { Db, Queryable } from '../../store/db.js';
import type { NodeCallRequest, NodeTools, PreparedNodeCall } from './node-calls-port.js';
import { NODE_SIGNALS } from './node-gateway-port.js';
import { OPEN_STATES } from './invocation-states.js';
import { findNode, nodeById } from './nodes.js';
import { boundedMessage, failureOutput, invocationOutput, usableDescriptors, type InvocationRow, type NodeRow } from './node-views.js';
import { descriptorHash } from './wire/catalog.js';
import { canonicalHash } from './wire/canonical-hash.js';
import { hashedPlan, planHash, type UnhashedPlan } from './wire/execution-plan.js';
import { execInputFault } from './wire/exec-input.js';
import { MAX_OPEN_INVOCATIONS, MAX_PLAN_TTL_MS, MAX_TIMEOUT_SECONDS } from './wire/limits.js';

export async function nodeTools(q: Queryable, projectId: string, ref: string): Promise<NodeTools | null> {
  const node = await findNode(q, projectId, ref);
  if (!node || node.revoked_at) return null;
  return {
    nodeId: node.id,
    toolAlias: node.aliases[0] ?? node.id,
    commands: usableDescriptors(node),
    authorityDigest: canonicalHash({
      node_id: node.id,
      approved_catalog_hash: node.approved_catalog_hash,
      allowed_commands: [...node.allowed_commands].sort(),
    }),
  };
}

export const idempotencyKey = (call: Pick<NodeCallRequest, 'responseId' | 'callId'>): string => `${call.responseId}:${call.callId}`;

const preparedOf = (row: InvocationRow, output: string | null = invocationOutput(row)): PreparedNodeCall => ({
  invocationId: row.id,
  planHash: row.plan_hash,
  expiresAt: row.expires_at,
  timeoutSeconds: row.plan.timeout_seconds,
  output,
});

/** What the call asks of the plan: the same for every attempt of one call. */
const sameRequest = (row: InvocationRow, call: NodeCallRequest): boolean => {
  const { plan_hash: _hash, workspace_within: _within, ...stored } = row.plan;
  const asked: UnhashedPlan = {
    ...stored,
    node_id: call.nodeId,
    command: call.command,
    input: call.input,
    ...(call.within ? { workspace_within: call.within } : {}),
  };
  return planHash(asked) === row.plan_hash;
};

async function existing(q: Queryable, call: NodeCallRequest): Promise<InvocationRow | null> {
  const { rows } = await q.query<InvocationRow>('SELECT * FROM node_invocations WHERE response_id = $1 AND call_id = $2', [call.responseId, call.callId]);
  return rows[0] ?? null;
}

/** Secret environment variables bound for a plan: by name, digest and length in it; by secret id beside it, to reveal at dispatch. */
interface BoundSecrets {
  env: NonNullable<UnhashedPlan['secret_env']>;
  refs: { name: string; secret_id: string }[];
}

/**
 * Each asked secret found among the project's, and bound by the digest and
 * length of its value (its fingerprint, kept when it was stored: the value is
 * not opened here), so the node can tell the value it is sent is the one the
 * plan was made for.
 */
async function bindSecrets(tx: Queryable, secrets: SecretStore, projectId: string, asked: NodeCallRequest['secretEnv']): Promise<BoundSecrets | string> {
  const bound: BoundSecrets = { env: [], refs: [] };
  for (const { name, secret } of asked ?? []) {
    const found = await findProjectSecret(tx, projectId, secret);
    if (!found) return `the secret ${JSON.stringify(secret)} mapped to ${name} is not a secret of this project`;
    // The fingerprint kept when it was stored; only a secret stored before fingerprints were kept is opened here.
    const fingerprint =
      found.value_digest && found.value_length
        ? { digest: found.value_digest, length: found.value_length }
        : await secrets.reveal(tx, projectId, found.id).then((value) => ({ digest: secretDigest(value), length: value.length }));
    bound.env.push({ name, ...fingerprint });
    bound.refs.push({ name, secret_id: found.id });
  }
  return bound;
}

/** The values of an invocation's secret environment, revealed for one send; null when one no longer matches its plan (rotated, deleted). */
export async function revealSecretEnv(q: Queryable, secrets: SecretStore, invocationId: string): Promise<Record<string, string> | null> {
  const { rows } = await q.query<Pick<InvocationRow, 'project_id' | 'plan'> & { secret_refs: BoundSecrets['refs'] | null }>(
    'SELECT project_id, plan, secret_refs FROM node_invocations WHERE id = $1',
    [invocationId],
  );
  const row = rows[0];
  if (!row?.secret_refs?.length) return {};
  const values: Record<string, string> = {};
  for (const ref of row.secret_refs) {
    const bound = row.plan.secret_env?.find((e) => e.name === ref.name);
    const value = await secrets.reveal(q, row.project_id, ref.secret_id).catch(() => null);
    if (!bound || value === null || value.length !== bound.length) return null;
    if (secretDigest(value) !== bound.digest) return null;
    values[ref.name] = value;
  }
  return values;
}

function planFor(
  node: NodeRow,
  descriptor: NodeCommandDescriptor | undefined,
  call: NodeCallRequest,
  now: Date,
  secretEnv: BoundSecrets['env'] = [],
): UnhashedPlan {
  const maxTimeout = Math.min(descriptor?.max_timeout_seconds ?? MAX_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS);
  return {
    invocation_id: newId('ninv', now.getTime()),
    node_id: node.id,
    command: call.command,
    // A command not usable still gets a well-formed plan: its row records the refusal.
    descriptor_hash: descriptor ? descriptorHash(descriptor) : canonicalHash({ unavailable: call.command }),
    catalog_hash: node.catalog_hash,
    input: call.input,
    ...(call.within ? { workspace_within: call.within } : {}),
    ...(secretEnv.length > 0 ? { secret_env: secretEnv } : {}),
    timeout_seconds: Math.max(1, Math.min(call.timeoutSeconds ?? maxTimeout, maxTimeout)),
    output_limit_bytes: descriptor?.max_output_bytes ?? 1,
    idempotency_key: idempotencyKey(call),
    prepared_at: now.toISOString(),
    expires_at: new Date(now.getTime() + MAX_PLAN_TTL_MS).toISOString(),
  };
}

/** Why the call ends before it is sent, or null. */
async function refusal(tx: Queryable, node: NodeRow, descriptor: NodeCommandDescriptor | undefined, call: NodeCallRequest) {
  if (node.revoked_at || !descriptor) {
    return { code: 'COMMAND_UNAVAILABLE' as NodeFailureCode, message: `The command ${call.command} is not an approved, unchanged command of this node.` };
  }
  const overLimit = execInputFault(call.input);
  if (overLimit) return { code: 'INVALID_PLAN' as NodeFailureCode, message: `Not sent: ${overLimit}.` };
  const { rows } = await tx.query<{ open: number }>('SELECT count(*)::int AS open FROM node_invocations WHERE node_id = $1 AND state = ANY($2::text[])', [
    node.id,
    OPEN_STATES,
  ]);
  if (rows[0].open >= MAX_OPEN_INVOCATIONS) {
    return { code: 'NODE_BUSY' as NodeFailureCode, message: `The node has ${MAX_OPEN_INVOCATIONS} open invocations; try again when some have ended.` };
  }
  return null;
}

export async function prepareCall(db: Db, secrets: SecretStore, projectId: string, call: NodeCallRequest): Promise<PreparedNodeCall> {
  return db.transaction(async (tx) => {
    // The node's row serialises its preparations: the open count cannot be overtaken.
    const node = await nodeById(tx, call.nodeId, true);
    const found = await existing(tx, call);
    if (found) {
      if (found.node_id !== call.nodeId || !sameRequest(found, call)) {
        return preparedOf(found, failureOutput('IDEMPOTENCY_CONFLICT', 'This call was already prepared with another plan; it is not sent again.'));
      }
      return preparedOf(found);
    }
    if (!node || node.project_id !== projectId) {
      return { invocationId: '', planHash: '', expiresAt: new Date(), timeoutSeconds: 0, output: failureOutput('COMMAND_UNAVAILABLE', 'No such node.') };
    }
    const descriptor = usableDescriptors(node).find((d) => d.name === call.command);
    const bound = await bindSecrets(tx, secrets, projectId, call.secretEnv);
    const plan = hashedPlan(planFor(node, descriptor, call, new Date(), typeof bound === 'string' ? [] : bound.env));
    const refused =
      typeof bound === 'string' ? { code: 'COMMAND_DENIED' as NodeFailureCode, message: `Not sent: ${bound}.` } : await refusal(tx, node, descriptor, call);
    const { rows } = await tx.query<InvocationRow>(
      `INSERT INTO node_invocations (id, project_id, node_id, response_id, call_id, idempotency_key, command, plan, plan_hash, state, expires_at,
         failure_code, failure_message, completed_at, secret_refs)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, CASE WHEN $12::text IS NULL THEN NULL ELSE now() END, $14::jsonb)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
        plan.invocation_id,
        projectId,
        node.id,
        call.responseId,
        call.callId,
        plan.idempotency_key,
        call.command,
        JSON.stringify(plan),
        plan.plan_hash,
        refused ? 'failed' : 'prepared',
        plan.expires_at,
        refused?.code ?? null,
        refused ? boundedMessage(refused.message) : null,
        typeof bound === 'string' || bound.refs.length === 0 ? null : JSON.stringify(bound.refs),
      ],
    );
    // Another process prepared the same call meanwhile (the insert waited for it): its plan is the one.
    if (!rows[0]) {
      const theirs = await existing(tx, call);
      if (!theirs) throw new Error(`the invocation of ${plan.idempotency_key} conflicted with one that is not there`);
      return sameRequest(theirs, call)
        ? preparedOf(theirs)
        : preparedOf(theirs, failureOutput('IDEMPOTENCY_CONFLICT', 'This call was already prepared with another plan.'));
    }
    if (!refused) await notifySignal(tx, NODE_SIGNALS.work, node.id);
    return preparedOf(rows[0]);
  });
}

export async function callOutcome(q: Queryable, invocationId: string): Promise<string | null> {
  const { rows } = await q.query<InvocationRow>('SELECT * FROM node_invocations WHERE id = $1', [invocationId]);
  return rows[0] ? invocationOutput(rows[0]) : null;
}
