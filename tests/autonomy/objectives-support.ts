// Helpers of the autonomy suites: REST calls checked against the OpenAPI
// document, a fake agent, an objective with an approved policy.
import assert from 'node:assert/strict';
import type { OperationId } from '../../generated/operations.js';
import { before } from 'node:test';
import type { TestHub } from '../support/hub.js';
import { assertMatchesSpec } from '../support/spec.js';

export type Json = Record<string, any>;
type Method = 'get' | 'post' | 'patch' | 'delete';

export async function call(ctx: () => TestHub, method: Method, path: string, operationId: OperationId, status: number, body?: Json, headers: Json = {}) {
  let req = ctx().http[method](path).set(ctx().auth).set(headers);
  if (body !== undefined) req = req.send(body);
  const res = await req;
  assertMatchesSpec(res, operationId);
  assert.equal(res.status, status, res.text);
  return res.body as Json;
}

/** A raw answer, for problems. */
export async function send(ctx: () => TestHub, method: Method, path: string, body?: Json) {
  let req = ctx().http[method](path).set(ctx().auth);
  if (body !== undefined) req = req.send(body);
  return req;
}

export const POLICY: Json = {
  objective_scope: 'the deploy pipeline of example/app',
  consequence_classes: ['observe'],
  allowed_tools: null,
  max_tokens: 100_000,
  max_seconds: 600,
  quiet_hours: null,
  expires_at: null,
};

export async function agent(ctx: () => TestHub, spec: Json = {}): Promise<string> {
  const name = `watcher-${Math.random().toString(36).slice(2, 10)}`;
  const created = await call(ctx, 'post', '/v1/agents', 'createAgent', 201, { name, model: { provider: 'fake' }, ...spec });
  return created.id as string;
}

export async function objective(ctx: () => TestHub, body: Json = {}): Promise<Json> {
  const agentId = body.agent ?? (await agent(ctx));
  return call(ctx, 'post', '/v1/objectives', 'createObjective', 201, {
    agent: agentId,
    description: 'Check the deploy; open an issue when it is red.',
    ...body,
  });
}

/** Drafts and approves `document`; answers the approved version. */
export async function approvedPolicy(ctx: () => TestHub, objectiveId: string, document: Json = POLICY): Promise<Json> {
  const draft = await call(ctx, 'post', `/v1/objectives/${objectiveId}/policies`, 'createObjectivePolicy', 201, { document });
  return call(ctx, 'post', `/v1/objectives/${objectiveId}/policies/${draft.version}/approve`, 'approveObjectivePolicy', 200, { hash: draft.hash });
}

export async function wakes(ctx: () => TestHub, objectiveId: string): Promise<Json[]> {
  return (await call(ctx, 'get', `/v1/objectives/${objectiveId}/wakes?limit=1000`, 'listObjectiveWakes', 200)).data;
}

/** Puts every enabled trigger of the objective `seconds` in the past, as if the hub had been down that long. */
export async function backdate(ctx: () => TestHub, objectiveId: string, seconds: number): Promise<void> {
  await ctx().hub.kernel.db.query(
    "UPDATE objective_triggers SET next_due_at = next_due_at - make_interval(secs => $2) WHERE objective_id = $1 AND status = 'enabled'",
    [objectiveId, seconds],
  );
}

/**
 * Stops the hub's own scheduler loop for the suite (registered inside it, after
 * the hub starts), so every tick is the test's own: a signal would kick the loop
 * into a tick of its own at any moment.
 */
export function ownTicks(ctx: () => TestHub): void {
  before(async () => {
    const loop = ctx()
      .hub.surfaces.modules.find((m) => m.name === 'autonomy')
      ?.loops?.find((l) => l.name === 'autonomy.scheduler');
    assert.ok(loop, 'the autonomy surface runs a scheduler loop');
    await loop.stop();
  });
}

/** A fake agent whose wake runs until it is cancelled (its first word is a minute away). */
export const STUCK_AGENT = { model: { provider: 'fake', script: [{ text: 'still checking', delay_ms: 60_000 }] } };
