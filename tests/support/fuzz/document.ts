// The OpenAPI document as the fuzzer reads it: component schemas, and each
// operation's parameters by where they travel (path, query, header).
import { readFileSync } from 'node:fs';
import type { OperationDescriptor } from '../../../generated/operations.js';

export type Schema = Record<string, any>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}

const doc = JSON.parse(readFileSync(new URL('../../../generated/openapi.json', import.meta.url), 'utf8'));

const REF_PREFIX = '#/components/schemas/';

/** A component schema by name. */
export function component(name: string): Schema {
  const schema = doc.components.schemas[name];
  if (!schema) throw new Error(`no component schema ${name}`);
  return schema;
}

/** The component a `$ref` names, or null when `schema` is not a reference. */
export function refName(schema: Schema): string | null {
  return typeof schema.$ref === 'string' ? schema.$ref.slice(REF_PREFIX.length) : null;
}

function resolveParameter(parameter: Schema): Parameter {
  return (parameter.$ref ? doc.components.parameters[parameter.$ref.split('/').pop()] : parameter) as Parameter;
}

/** The parameters of `op` (path-level ones included) that travel `where`. */
export function parametersOf(op: OperationDescriptor, where: Parameter['in']): Parameter[] {
  const item = doc.paths[op.path];
  const operation = item[op.method.toLowerCase()];
  return [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolveParameter).filter((p) => p.in === where);
}
