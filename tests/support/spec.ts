// Every response body a test sees is checked against the OpenAPI document.
import assert from 'node:assert/strict';
import type { Response } from 'supertest';
import { operations, type OperationId } from '../../generated/operations.js';
import { matchesSchema } from '../../adapters/http/validation.js';

/** Asserts `res` is what the document says `operationId` answers with at this status. */
export function assertMatchesSpec(res: Response, operationId: OperationId): void {
  const schema = declaredSchema(operationId, res.status, res.text);
  if (!schema) return;
  const expectedType = res.status >= 400 ? 'application/problem+json' : 'application/json';
  assert.match(String(res.headers['content-type']), new RegExp(`^${expectedType.replace('+', '\\+')}`), `content type of ${operationId} ${res.status}`);
  assertBodyMatches(schema, operationId, res.status, res.body, res.text);
}

/** Asserts a parsed JSON body (say, printed by curl) is what `operationId` answers with at `status`. */
export function assertBodyMatchesSpec(body: unknown, operationId: OperationId, status: number): void {
  const text = JSON.stringify(body);
  const schema = declaredSchema(operationId, status, text);
  if (schema) assertBodyMatches(schema, operationId, status, body, text);
}

function declaredSchema(operationId: OperationId, status: number, text: string): string | null {
  const op = operations.find((o) => o.operationId === operationId);
  assert.ok(op, `unknown operation ${operationId}`);
  const declared = String(status) in op.responses ? String(status) : 'default';
  assert.ok(declared in op.responses, `${operationId} does not declare status ${status}: ${text}`);
  return op.responses[declared] ?? null;
}

function assertBodyMatches(schema: string, operationId: OperationId, status: number, body: unknown, text: string): void {
  const result = matchesSchema(schema, body);
  assert.ok(result.ok, `${operationId} ${status} body does not match ${schema}: ${JSON.stringify(result.errors)}\n${text}`);
}

/** Asserts an RFC 9457 problem of the given registry slug. */
export function assertProblem(res: Response, status: number, slug: string): void {
  assert.equal(res.status, status, `expected ${status} ${slug}, got ${res.status}: ${res.text}`);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const result = matchesSchema('Problem', res.body);
  assert.ok(result.ok, `problem body does not match the schema: ${JSON.stringify(result.errors)}`);
  assert.equal(res.body.type, `urn:palai:problem:${slug}`);
  assert.equal(res.body.status, status);
  assert.ok(!/\n\s+at /.test(res.text), 'a stack trace leaked into the problem');
}
