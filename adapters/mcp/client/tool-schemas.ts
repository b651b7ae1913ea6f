// A server's JSON Schemas as Palai uses them: the input schema is what the model
// is shown and what the broker checks arguments against before a call; the
// output schema is what a result's structuredContent must satisfy. Each is
// compiled under the draft its `$schema` names, as a caller's schema is. Each
// distinct schema is prepared once per process (the same object every run, so
// the broker's compiled validator is reused too).
import type { ValidateFunction } from 'ajv';
import { compileSchema } from '../../../core/api/index.js';

const MAX_CACHED = 1000;

export interface PreparedSchema {
  /** Without `$schema`: a model provider wants the schema alone. */
  schema: Record<string, unknown>;
  /** The server's schema as it sent it: what arguments are checked against, under its own draft. */
  raw: Record<string, unknown>;
  /** Null when the schema cannot be compiled: then the server is left to check. */
  validate: ValidateFunction | null;
}

const prepared = new Map<string, PreparedSchema>();

export function prepareSchema(raw: Record<string, unknown>): PreparedSchema {
  const key = JSON.stringify(raw);
  let entry = prepared.get(key);
  if (!entry) {
    const { $schema: _dialect, ...schema } = raw;
    const compiled = compileSchema(raw);
    entry = { schema: { ...schema, type: 'object' }, raw, validate: 'validate' in compiled ? compiled.validate : null };
    if (prepared.size >= MAX_CACHED) prepared.delete(prepared.keys().next().value as string);
    prepared.set(key, entry);
  }
  return entry;
}

/** What is wrong with `value` under a prepared schema, or null. */
export function schemaProblems(entry: PreparedSchema, value: unknown): string | null {
  if (!entry.validate || entry.validate(value)) return null;
  return (entry.validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`).join('; ');
}
