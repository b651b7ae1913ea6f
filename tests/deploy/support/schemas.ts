// Validators for the deploy files, compiled from the schemas vendored in
// tests/deploy/schemas/ (its README says where each comes from). Offline: no
// schema is fetched at run time.
import { readFileSync } from 'node:fs';
import { Ajv, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';

const schemaFile = (name: string): AnySchemaObject => JSON.parse(readFileSync(new URL(`../schemas/${name}`, import.meta.url), 'utf8'));

/** The Compose Specification's schema (draft-07, named by its https URL, which ajv knows under http). */
export function composeValidator(): ValidateFunction {
  const schema = schemaFile('compose-spec.json');
  const draft07 = JSON.parse(readFileSync(new URL('../../../node_modules/ajv/dist/refs/json-schema-draft-07.json', import.meta.url), 'utf8'));
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false });
  if (schema.$schema !== draft07.$id) ajv.addMetaSchema({ ...draft07, $id: schema.$schema });
  return ajv.compile(schema);
}

// Kubernetes' own formats, as the API server reads them.
const QUANTITY = /^[+-]?(?:\d+|\d+\.\d*|\.\d+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

function kubernetesAjv(schema: AnySchemaObject): Ajv {
  const ajv = new Ajv({ allErrors: true, strictTypes: false });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('quantity', QUANTITY);
  ajv.addFormat('byte', BASE64);
  ajv.addFormat('date-time', RFC3339);
  ajv.addKeyword('x-kinds');
  ajv.addSchema(schema);
  return ajv;
}

/** What `kubernetes-strict.json` covers: `apiVersion/kind` → its definition. */
export interface KubernetesValidators {
  /** The kinds the vendored schema covers, as `apiVersion/kind`. */
  kinds: string[];
  /** A whole object of that kind: every required field, no unknown field. */
  full(apiVersion: string, kind: string): ValidateFunction | undefined;
  /** A patch of that kind: no unknown field and every type right, but any field may be left out. */
  partial(apiVersion: string, kind: string): ValidateFunction | undefined;
}

export function kubernetesValidators(): KubernetesValidators {
  const schema = schemaFile('kubernetes-strict.json');
  const kinds = schema['x-kinds'] as Record<string, string>;
  const full = kubernetesAjv(schema);
  const partial = kubernetesAjv(withoutRequired(structuredClone(schema)));
  const lookup = (ajv: Ajv) => (apiVersion: string, kind: string) => {
    const id = kinds[`${apiVersion}/${kind}`];
    return id === undefined ? undefined : ajv.getSchema(`${schema.$id}#/definitions/${id}`);
  };
  return { kinds: Object.keys(kinds), full: lookup(full), partial: lookup(partial) };
}

function withoutRequired(node: unknown): AnySchemaObject {
  if (Array.isArray(node)) node.forEach(withoutRequired);
  else if (node && typeof node === 'object') {
    const object = node as Record<string, unknown>;
    if (Array.isArray(object.required)) delete object.required;
    Object.values(object).forEach(withoutRequired);
  }
  return node as AnySchemaObject;
}

/** One line per error: where in the document, and what is wrong. */
export function explain(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => `  ${e.instancePath || '/'}: ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${e.params.additionalProperty})` : ''}`)
    .join('\n');
}
