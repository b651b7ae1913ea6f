// Every response body a test sees is checked against the OpenAPI document.
import assert from 'node:assert/strict';
import type { Response } from 'supertest';
import { operations, type OperationId } from '../../generated/operations.js';
import { matchesSchema } from '../../adapters/http/validation.js';

/** Asserts `res` is what the document says `operationId` answers with at this status. */
export function assertMatchesSpec(res: Response, operationId: OperationId): void {
  const op = operations.find((o) => o.operationId === operationId);
  assert.ok(op, `unknown operation ${operationId}`);
  const declared = String(res.status) in op.responses ? String(res.status) : 'default';
  assert.ok(declared in op.responses, `${operationId} does not declare status ${res.status}: ${res.text}`);
  const schema = op.responses[declared];
  if (!schema) return;
  const expectedType = res.status >= 400 ? 'application/problem+json' : 'application/json';
  assert.match(String(res.headers['content-type']), new RegExp(`^${expectedType.replace('+', '\\+')}`), `content type of ${operationId} ${res.status}`);
  const result = matchesSchema(schema, res.body);
  assert.ok(result.ok, `${operationId} ${res.status} body does not match ${schema}: ${JSON.stringify(result.errors)}\n${res.text}`);
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
