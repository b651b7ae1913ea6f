// The few requests most suites begin with, each checked against the document
// and its expected status; they return the parsed body.
import assert from 'node:assert/strict';
import type { OperationId } from '../../generated/operations.js';
import type { TestHub } from './hub.js';
import { assertMatchesSpec } from './spec.js';

type Body = Record<string, unknown>;
type Auth = { Authorization: string };

async function post(ctx: () => TestHub, path: string, operationId: OperationId, status: number, body: Body, auth: Auth = ctx().auth) {
  const res = await ctx().http.post(path).set(auth).send(body);
  assertMatchesSpec(res, operationId);
  assert.equal(res.status, status, res.text);
  return res.body;
}

/** POST /v1/agents, expecting 201; `auth` defaults to the hub's own project. */
export const createAgent = (ctx: () => TestHub, body: Body, auth?: Auth) => post(ctx, '/v1/agents', 'createAgent', 201, body, auth);

/** POST /v1/responses, expecting 200 (a run that failed is answered with 200 too). */
export const respond = (ctx: () => TestHub, body: Body) => post(ctx, '/v1/responses', 'createResponse', 200, body);

/** POST /v1/sessions, expecting 201. */
export const createSession = (ctx: () => TestHub, body: Body) => post(ctx, '/v1/sessions', 'createSession', 201, body);
