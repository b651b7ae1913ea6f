// A caller's JSON Schema (a run's text format, a tool's parameters, an agent's
// output_schema, an MCP server's tool schemas) compiled under the draft its
// `$schema` names. The clients' own helpers (zod-to-json-schema, zod 4's
// toJSONSchema, the AI SDK, the Agents SDK, the openai SDK's zod helpers) send
// draft-07; draft-04, draft-06, 2019-09 and 2020-12 are read too, and a schema
// naming none is 2020-12. Every place that compiles such a schema asks here, so
// a schema is usable everywhere or refused at the boundary, never mid-run.
import { createRequire } from 'node:module';
import { Ajv, type AnySchemaObject, type ValidateFunction } from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { PalaiError, type FieldError } from '../errors/palai-error.js';
import { canonicalJson } from '../json.js';

export type SchemaDraft = 'draft-04' | 'draft-06' | 'draft-07' | '2019-09' | '2020-12';

// `addUsedSchema: false`: a schema's `$id` is not registered in the shared instance, so two callers'
// schemas with one `$id` never collide (a schema's `$ref`s to its own `$id` still resolve). `logger: false`:
// an unknown `format` is an annotation, not a warning on the console for every schema that has one.
const OPTIONS = { strict: false, allErrors: true, addUsedSchema: false, logger: false } as const;

type Compiler = Pick<Ajv, 'compile'>;

// Required, not imported: the build's JavaScript target drops an import's `with { type: 'json' }`.
const draft06MetaSchema = (): AnySchemaObject => createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-06.json') as AnySchemaObject;

/** Each draft: the `$schema` URI its compiler knows it by, and how to make one. */
const DRAFTS: Record<SchemaDraft, { uri: string; compiler: () => Compiler }> = {
  'draft-04': { uri: 'http://json-schema.org/draft-04/schema#', compiler: () => new AjvDraft04.default(OPTIONS) },
  'draft-06': { uri: 'http://json-schema.org/draft-06/schema#', compiler: () => new Ajv(OPTIONS).addMetaSchema(draft06MetaSchema()) },
  'draft-07': { uri: 'http://json-schema.org/draft-07/schema#', compiler: () => new Ajv(OPTIONS) },
  '2019-09': { uri: 'https://json-schema.org/draft/2019-09/schema', compiler: () => new Ajv2019(OPTIONS) },
  '2020-12': { uri: 'https://json-schema.org/draft/2020-12/schema', compiler: () => new Ajv2020(OPTIONS) },
};
const DEFAULT_DRAFT: SchemaDraft = '2020-12';

/** A `$schema` URI without its scheme and empty fragment: http or https, with `#` or without, name one draft. */
const uriKey = (uri: string): string =>
  uri
    .trim()
    .replace(/^https?:\/\//i, '')
    .replace(/#$/, '');
const DRAFT_BY_URI = new Map(Object.entries(DRAFTS).map(([draft, { uri }]) => [uriKey(uri), draft as SchemaDraft]));

/** The draft `$schema` names (none: 2020-12), or null for a URI Palai does not know. */
export function draftOf(schema: Record<string, unknown>): SchemaDraft | null {
  const uri = schema.$schema;
  if (uri === undefined) return DEFAULT_DRAFT;
  return typeof uri === 'string' ? (DRAFT_BY_URI.get(uriKey(uri)) ?? null) : null;
}

// An ajv instance keeps every schema it compiled, and the code it made for it, for its whole life: so a
// draft's instance is retired after so many compilations, and lives on only in the validators it made,
// which the bounded cache below lets go.
const COMPILES_PER_INSTANCE = 500;
const compilers = new Map<SchemaDraft, { compiler: Compiler; compiles: number }>();

function compilerFor(draft: SchemaDraft): Compiler {
  let entry = compilers.get(draft);
  if (!entry || entry.compiles >= COMPILES_PER_INSTANCE) {
    entry = { compiler: DRAFTS[draft].compiler(), compiles: 0 };
    compilers.set(draft, entry);
  }
  entry.compiles++;
  return entry.compiler;
}

export type CompiledSchema = { validate: ValidateFunction; draft: SchemaDraft } | { problem: string };

const KNOWN = Object.keys(DRAFTS).join(', ');

/** ajv's message, each part once (a meta-schema's alternatives repeat the same complaint). */
function ajvProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const lead = /^schema is invalid: /.exec(message)?.[0] ?? '';
  return lead + [...new Set(message.slice(lead.length).split(', '))].join(', ');
}

function compile(schema: unknown): CompiledSchema {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return { problem: 'is not a JSON Schema object' };
  const object = schema as Record<string, unknown>;
  const draft = draftOf(object);
  if (draft === null) return { problem: `has a $schema Palai does not know, ${JSON.stringify(object.$schema)} (known drafts: ${KNOWN})` };
  // Spelled as the compiler knows it (draft-07's https URI is the same draft as its http one).
  const spelled = object.$schema === undefined || object.$schema === DRAFTS[draft].uri ? object : { ...object, $schema: DRAFTS[draft].uri };
  try {
    return { validate: compilerFor(draft).compile(spelled), draft };
  } catch (error) {
    return { problem: `is not a usable JSON Schema (${draft}): ${ajvProblem(error)}` };
  }
}

// By canonical text, so the same schema sent again (each request, each run) is compiled once; the least
// recently used goes first. By object too, so a schema the process holds (a built-in's) is not even re-read.
const MAX_CACHED = 1000;
const byText = new Map<string, CompiledSchema>();
const byObject = new WeakMap<object, CompiledSchema>();

/** The validator of `schema` under its draft, or what makes it unusable (worded to follow its field's name). */
export function compileSchema(schema: unknown): CompiledSchema {
  if (schema === null || typeof schema !== 'object') return compile(schema);
  const held = byObject.get(schema);
  if (held) return held;
  const key = canonicalJson(schema);
  let entry = byText.get(key);
  if (entry) byText.delete(key);
  else entry = compile(schema);
  byText.set(key, entry);
  if (byText.size > MAX_CACHED) byText.delete(byText.keys().next().value as string);
  byObject.set(schema, entry);
  return entry;
}

/** What is wrong with the schema at `pointer`, or null when it is usable (for checks that gather every error). */
export function schemaFieldError(schema: unknown, pointer: string): FieldError | null {
  const compiled = compileSchema(schema);
  return 'problem' in compiled ? { pointer, detail: compiled.problem } : null;
}

/** The validator of a caller's schema; an unusable one is validation-failed, naming `pointer`. */
export function compileUserSchema(schema: unknown, pointer: string): ValidateFunction {
  const compiled = compileSchema(schema);
  if ('validate' in compiled) return compiled.validate;
  throw new PalaiError('validation-failed', `${pointer || 'The schema'} ${compiled.problem}.`, { errors: [{ pointer, detail: compiled.problem }] });
}
