// Request validation from the OpenAPI document: the validators in generated/ are
// compiled from openapi/palai.yaml, and their errors become JSON pointers.
import type { ErrorObject, ValidateFunction } from 'ajv';
import * as bodyValidators from '../../generated/body-validators.js';
import * as queryValidators from '../../generated/query-validators.js';
import { PalaiError, type FieldError } from '../../core/errors/palai-error.js';

const bodies = bodyValidators as unknown as Record<string, ValidateFunction>;
const queries = queryValidators as unknown as Record<string, ValidateFunction>;

function describe(error: ErrorObject): FieldError {
  const params = error.params as Record<string, string>;
  switch (error.keyword) {
    case 'required':
      return { pointer: `${error.instancePath}/${escapePointer(params.missingProperty)}`, detail: 'is required' };
    case 'additionalProperties':
      return { pointer: `${error.instancePath}/${escapePointer(params.additionalProperty)}`, detail: 'is not a known field' };
    case 'unevaluatedProperties':
      return { pointer: `${error.instancePath}/${escapePointer(params.unevaluatedProperty)}`, detail: 'is not a known field' };
    default:
      return { pointer: error.instancePath, detail: error.message ?? 'is invalid' };
  }
}

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

function fieldErrors(errors: ErrorObject[] | null | undefined, prefix = ''): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors ?? []) {
    // "must match exactly one schema in oneOf" or "must match "then" schema" only repeats what the branch errors say.
    if ((error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'if') && (errors?.length ?? 0) > 1) continue;
    const described = describe(error);
    const entry = { pointer: prefix + described.pointer, detail: described.detail };
    const key = `${entry.pointer} ${entry.detail}`;
    if (!seen.has(key)) out.push(entry), seen.add(key);
  }
  return out;
}

export function validateBody<T>(schemaName: string, body: unknown): T {
  const validate = bodies[schemaName];
  if (!validate) throw new Error(`no generated validator for ${schemaName}`);
  if (body === undefined) {
    throw new PalaiError('validation-failed', 'A JSON request body is required.', { errors: [{ pointer: '', detail: 'is required' }] });
  }
  if (!validate(body)) {
    throw new PalaiError('validation-failed', 'The request body does not match the schema.', { errors: fieldErrors(validate.errors) });
  }
  return body as T;
}

/** Validates (and, since query values are text, type-coerces) a copy of the query. */
export function validateQuery<T>(validatorName: string, query: Record<string, unknown>): T {
  const validate = queries[validatorName];
  if (!validate) throw new Error(`no generated validator for ${validatorName}`);
  const copy = { ...query };
  if (!validate(copy)) {
    throw new PalaiError('validation-failed', 'The query string does not match the schema.', { errors: fieldErrors(validate.errors, '/query') });
  }
  return copy as T;
}

/** Exposed for tests: check any body against a component schema of the document. */
export function matchesSchema(schemaName: string, value: unknown): { ok: boolean; errors: FieldError[] } {
  const validate = bodies[schemaName];
  if (!validate) throw new Error(`no generated validator for ${schemaName}`);
  const ok = validate(value) as boolean;
  return { ok, errors: ok ? [] : fieldErrors(validate.errors) };
}
