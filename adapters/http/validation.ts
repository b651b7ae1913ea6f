// Request validation from the OpenAPI document: the validators in generated/ are
// compiled from openapi/palai.yaml, and their errors become JSON pointers. Text
// the store cannot hold and nesting too deep to walk are refused first (json-guard.ts).
import type { ErrorObject, ValidateFunction } from 'ajv';
import * as bodyValidators from '../../generated/body-validators.js';
import * as queryValidators from '../../generated/query-validators.js';
import { PalaiError, type FieldError } from '../../core/errors/palai-error.js';
import { inspectJson, MAX_JSON_DEPTH, unstorableText } from '../../core/api/index.js';

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
    if (!seen.has(key)) (out.push(entry), seen.add(key));
  }
  return out;
}

export function validateBody<T>(schemaName: string, body: unknown): T {
  const validate = bodies[schemaName];
  if (!validate) throw new Error(`no generated validator for ${schemaName}`);
  if (body === undefined) {
    throw new PalaiError('validation-failed', 'A JSON request body is required.', { errors: [{ pointer: '', detail: 'is required' }] });
  }
  // Before the schema check: ajv and everything after it recurse, and the store cannot hold such text.
  const guarded = inspectJson(body);
  if (guarded.errors.length > 0) {
    const detail = guarded.tooDeep
      ? `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels, the maximum.`
      : 'The request body contains text that cannot be stored: U+0000 (NUL) or a lone UTF-16 surrogate.';
    throw new PalaiError('validation-failed', detail, { errors: guarded.errors });
  }
  if (!validate(body)) {
    throw new PalaiError('validation-failed', 'The request body does not match the schema.', { errors: fieldErrors(validate.errors) });
  }
  return body as T;
}

/** Every query parameter (a repeated one too) must be text the store can hold: the whole query reaches the operation. */
function assertStorableQuery(query: Record<string, unknown>): void {
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    const why = unstorableText(name);
    if (why) {
      errors.push({ pointer: '/query', detail: `has a parameter name that ${why}` });
      continue;
    }
    const values = Array.isArray(value) ? value : [value];
    values.forEach((text, index) => {
      const problem = typeof text === 'string' ? unstorableText(text) : null;
      if (problem) errors.push({ pointer: `/query/${escapePointer(name)}${Array.isArray(value) ? `/${index}` : ''}`, detail: problem });
    });
  }
  if (errors.length > 0) throw new PalaiError('validation-failed', 'The query string contains text that cannot be stored.', { errors });
}

/** Validates (and, since query values are text, type-coerces) a copy of the query. */
export function validateQuery<T>(validatorName: string, query: Record<string, unknown>): T {
  const validate = queries[validatorName];
  if (!validate) throw new Error(`no generated validator for ${validatorName}`);
  const copy = { ...query };
  assertStorableQuery(copy);
  if (!validate(copy)) {
    throw new PalaiError('validation-failed', 'The query string does not match the schema.', { errors: fieldErrors(validate.errors, '/query') });
  }
  // ajv coerces "1e309" or "Infinity" to a number no range check applies to; no integer parameter means one.
  const infinite = Object.entries(copy).filter(([, value]) => typeof value === 'number' && !Number.isFinite(value));
  if (infinite.length > 0) {
    throw new PalaiError('validation-failed', 'The query string does not match the schema.', {
      errors: infinite.map(([name]) => ({ pointer: `/query/${escapePointer(name)}`, detail: 'must be a finite integer' })),
    });
  }
  return copy as T;
}

/** Path parameters arrive percent-decoded; they are looked up in the store, so they must be text it can hold. */
export function assertStorablePathParams(params: Record<string, string>): void {
  for (const [name, value] of Object.entries(params)) {
    const why = unstorableText(value);
    if (why) throw new PalaiError('invalid-request', `The path parameter ${name} ${why}.`);
  }
}

/** Exposed for tests: check any body against a component schema of the document. */
export function matchesSchema(schemaName: string, value: unknown): { ok: boolean; errors: FieldError[] } {
  const validate = bodies[schemaName];
  if (!validate) throw new Error(`no generated validator for ${schemaName}`);
  const ok = validate(value) as boolean;
  return { ok, errors: ok ? [] : fieldErrors(validate.errors) };
}
