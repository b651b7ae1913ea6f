// A server's JSON Schemas as Palai uses them: the input schema is what the model
// is shown and what the broker checks arguments against before a call; the
// output schema is what a result's structuredContent must satisfy. Each
// distinct schema is prepared once per process (the same object every run, so
// the broker's compiled validator is reused too).
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

const compiler = new Ajv2020({ strict: false, allErrors: true });
const MAX_CACHED = 1000;

export interface PreparedSchema {
  /** Without `$schema`: a model provider wants the schema alone, and any draft's keywords are read as 2020-12. */
  schema: Record<string, unknown>;
  /** Null when the schema cannot be compiled: then the server is left to check. */
  validate: ValidateFunction | null;
}

const prepared = new Map<string, PreparedSchema>();

export function prepareSchema(raw: Record<string, unknown>): PreparedSchema {
  const key = JSON.stringify(raw);
  let entry = prepared.get(key);
  if (!entry) {
    const { $schema: _dialect, ...schema } = raw;
    let validate: ValidateFunction | null = null;
    try {
      validate = compiler.compile(schema);
    } catch {
      validate = null;
    }
    entry = { schema: { ...schema, type: 'object' }, validate };
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
