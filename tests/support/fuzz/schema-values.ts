// JSON values from the OpenAPI document's schemas: `validValue` gives values the
// schema accepts (small ones, steered by hints where a value must name something
// that exists), `invalidValue` gives values wrong in exactly one place, saying
// where and how in `mutation`, so a counterexample reads like a bug report.
import fc from 'fast-check';
import { component, refName, type Schema } from './document.js';

/** A hint's answer meaning "leave this property out". */
export const OMIT = Symbol('omit');

/** Generators that replace the schema's own for a property: key `Component.property`, or `*.property` for any component. */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

export interface Scope {
  hints: Hints;
  /** The component schema being walked (for hint keys). */
  component: string;
  depth: number;
}

/** A value the schema rejects, and what was done to make it so. */
export interface Mutant {
  value: unknown;
  mutation: string;
}

/** Below this depth objects carry only their required properties and arrays their fewest items. */
const LEAN_DEPTH = 4;

/** Characters a body may carry that the store can hold: everything but U+0000 and lone surrogates. */
export const storableChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...'abcxyzAZ09 _-.~/"\\') },
  { weight: 2, arbitrary: fc.integer({ min: 0x01, max: 0xd7ff }).map((c) => String.fromCodePoint(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0xe000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)) },
);

export const storableString = (minLength = 0, maxLength = 16) => fc.string({ unit: storableChar, minLength, maxLength });

const smallJson = fc.jsonValue({ maxDepth: 2, stringUnit: storableChar });

function hintFor(scope: Scope, property: string): fc.Arbitrary<unknown> | undefined {
  return scope.hints[`${scope.component}.${property}`] ?? scope.hints[`*.${property}`];
}

/** Follows a `$ref`, entering the component's scope. */
function resolve(schema: Schema, scope: Scope): { schema: Schema; scope: Scope } {
  const ref = refName(schema);
  return ref ? resolve(component(ref), { ...scope, component: ref }) : { schema, scope };
}

type JsonType = 'null' | 'boolean' | 'integer' | 'number' | 'string' | 'array' | 'object';

function typesOf(schema: Schema): JsonType[] | null {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === 'string') return [schema.type as JsonType];
  if (schema.properties || schema.allOf || schema.additionalProperties !== undefined) return ['object'];
  if (schema.items) return ['array'];
  return null;
}

interface ObjectView {
  properties: Record<string, { schema: Schema; scope: Scope }>;
  required: string[];
  closed: boolean;
  additional: Schema | null;
  maxProperties?: number;
  nameMaxLength?: number;
}

/** An object schema with its `allOf` parts merged and `if/then` requirements taken as always required. */
function objectView(schema: Schema, scope: Scope): ObjectView {
  const view: ObjectView = { properties: {}, required: [], closed: false, additional: null };
  const parts = [{ schema, scope }, ...(schema.allOf ?? []).map((part: Schema) => resolve(part, scope))];
  for (const part of parts) {
    for (const [name, property] of Object.entries<Schema>(part.schema.properties ?? {})) view.properties[name] = { schema: property, scope: part.scope };
    view.required.push(...(part.schema.required ?? []), ...(part.schema.then?.required ?? []));
  }
  view.required = [...new Set(view.required)];
  view.closed = schema.additionalProperties === false || schema.unevaluatedProperties === false;
  if (typeof schema.additionalProperties === 'object') view.additional = schema.additionalProperties;
  view.maxProperties = schema.maxProperties;
  view.nameMaxLength = schema.propertyNames?.maxLength;
  return view;
}

const dropOmitted = (record: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== OMIT));

function stripLookaheads(pattern: string): string {
  return pattern.replace(/\(\?!.*?\)/g, '');
}

function validString(schema: Schema): fc.Arbitrary<string> {
  if (schema.pattern) {
    const full = new RegExp(schema.pattern, 'u');
    return fc.stringMatching(new RegExp(stripLookaheads(schema.pattern))).filter((s) => full.test(s));
  }
  const min = schema.minLength ?? 0;
  return storableString(min, Math.min(schema.maxLength ?? min + 16, min + 16));
}

function validInteger(schema: Schema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1000;
  if (schema.maximum !== undefined) {
    return fc.oneof(fc.integer({ min, max: Math.min(schema.maximum, min + 50) }), fc.constantFrom(min, schema.maximum));
  }
  // No maximum in the document: every integer is valid, including those no column can hold.
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min, max: min + 50 }) },
    { weight: 1, arbitrary: fc.constantFrom(2 ** 31 - 1, 2 ** 31, Number.MAX_SAFE_INTEGER) },
  );
}

function validObject(schema: Schema, scope: Scope): fc.Arbitrary<Record<string, unknown>> {
  const view = objectView(schema, scope);
  const names = Object.keys(view.properties);
  if (names.length === 0) {
    const max = Math.min(view.maxProperties ?? 3, 3);
    if (view.additional) return fc.dictionary(storableString(1, Math.min(view.nameMaxLength ?? 12, 12)), validValue(view.additional, scope), { maxKeys: max });
    return fc.dictionary(storableString(1, 8), smallJson, { maxKeys: max });
  }
  const lean = scope.depth >= LEAN_DEPTH;
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names) {
    if (lean && !view.required.includes(name)) continue;
    const { schema: property, scope: declared } = view.properties[name];
    model[name] = hintFor(declared, name) ?? validValue(property, { ...declared, depth: scope.depth + 1 });
  }
  return fc.record(model, { requiredKeys: view.required.filter((name) => name in model) }).map(dropOmitted);
}

/** A value `schema` accepts; hints override properties whose value must refer to something real. */
export function validValue(schema: Schema, scope: Scope): fc.Arbitrary<unknown> {
  ({ schema, scope } = resolve(schema, scope));
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const choices: Schema[] | undefined = schema.oneOf ?? schema.anyOf;
  if (choices) return fc.oneof(...choices.map((choice) => validValue(choice, scope)));
  const types = typesOf(schema);
  if (!types) return smallJson;
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'null':
          return fc.constant(null);
        case 'boolean':
          return fc.boolean();
        case 'integer':
          return validInteger(schema);
        case 'number':
          return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
        case 'string':
          return validString(schema);
        case 'array': {
          const min = schema.minItems ?? 0;
          const max = scope.depth >= LEAN_DEPTH ? min : Math.min(schema.maxItems ?? min + 3, min + 3);
          return fc.array(validValue(schema.items ?? {}, { ...scope, depth: scope.depth + 1 }), { minLength: min, maxLength: max });
        }
        case 'object':
          return validObject(schema, scope);
      }
    }),
  );
}

/** One value of each JSON kind; those the schema's types exclude are wrong-type mutants. */
const KINDS: [JsonType, unknown][] = [
  ['null', null],
  ['boolean', true],
  ['integer', 7],
  ['number', 1.5],
  ['string', 'text'],
  ['array', [1, 'two']],
  ['object', { an: 'object' }],
];

function schemaTypes(schema: Schema, scope: Scope, seen = 0): Set<JsonType> | null {
  ({ schema, scope } = resolve(schema, scope));
  if ('const' in schema || schema.enum) return null;
  const choices: Schema[] | undefined = schema.oneOf ?? schema.anyOf;
  if (choices && seen < 4) {
    const all = new Set<JsonType>();
    for (const choice of choices) {
      const types = schemaTypes(choice, scope, seen + 1);
      if (!types) return null;
      types.forEach((t) => all.add(t));
    }
    return all;
  }
  const types = typesOf(schema);
  if (!types) return null;
  const set = new Set(types);
  if (set.has('number')) set.add('integer');
  return set;
}

const at = (pointer: string, what: string): string => `${pointer || '(root)'}: ${what}`;

/** A value of `schema`'s shape that is wrong at one place (possibly nested), described in `mutation`. */
export function invalidValue(schema: Schema, scope: Scope, pointer = ''): fc.Arbitrary<Mutant> {
  ({ schema, scope } = resolve(schema, scope));
  const mutants: fc.Arbitrary<Mutant>[] = [];
  const types = schemaTypes(schema, scope);
  const wrong = KINDS.filter(([kind]) => types !== null && !types.has(kind));
  if (wrong.length > 0) mutants.push(fc.constantFrom(...wrong).map(([kind, value]) => ({ value, mutation: at(pointer, `a ${kind}, the wrong type`) })));
  if (schema.enum || 'const' in schema) {
    mutants.push(fc.constantFrom('not-one-of-them', '', 'FAKE').map((value) => ({ value, mutation: at(pointer, 'not an allowed value') })));
  }
  const choices: Schema[] | undefined = schema.oneOf ?? schema.anyOf;
  if (choices) mutants.push(fc.oneof(...choices.map((choice) => invalidValue(choice, scope, pointer))));
  const deeper = scope.depth < LEAN_DEPTH + 2;
  for (const type of typesOf(schema) ?? []) {
    if (type === 'string') mutants.push(...invalidStrings(schema, pointer));
    if (type === 'integer' || type === 'number') mutants.push(...invalidNumbers(schema, type, pointer));
    if (type === 'array') mutants.push(...invalidArrays(schema, scope, pointer, deeper));
    if (type === 'object') mutants.push(...invalidObjects(schema, scope, pointer, deeper));
  }
  if (mutants.length === 0) return validValue(schema, scope).map((value) => ({ value, mutation: at(pointer, 'anything is valid here; left valid') }));
  return fc.oneof(...mutants);
}

function invalidStrings(schema: Schema, pointer: string): fc.Arbitrary<Mutant>[] {
  const out: fc.Arbitrary<Mutant>[] = [];
  if (schema.maxLength !== undefined) {
    out.push(
      fc
        .integer({ min: 1, max: 8 })
        .map((extra) => ({ value: 'x'.repeat(schema.maxLength + extra), mutation: at(pointer, `longer than maxLength ${schema.maxLength}`) })),
    );
  }
  if (schema.minLength) out.push(fc.constant({ value: '', mutation: at(pointer, `shorter than minLength ${schema.minLength}`) }));
  if (schema.pattern) {
    const full = new RegExp(schema.pattern, 'u');
    const misfits = ['', ' ', 'has space', '../up', 'agt_taken', 'mconn_taken', '-lead', 'ünï', 'x'.repeat(65), 'a\tb'].filter((s) => !full.test(s));
    if (misfits.length > 0) out.push(fc.constantFrom(...misfits).map((value) => ({ value, mutation: at(pointer, `does not match ${schema.pattern}`) })));
  }
  return out;
}

function invalidNumbers(schema: Schema, type: 'integer' | 'number', pointer: string): fc.Arbitrary<Mutant>[] {
  const candidates: [number, string][] = [
    [1e308, 'far beyond any column'],
    [-1e308, 'far below any column'],
    [2 ** 53 + 2, 'beyond the safe integers'],
  ];
  if (type === 'integer') candidates.push([2.5, 'not an integer']);
  if (schema.minimum !== undefined) candidates.push([schema.minimum - (type === 'integer' ? 1 : 0.5), `below minimum ${schema.minimum}`]);
  if (schema.maximum !== undefined) candidates.push([schema.maximum + (type === 'integer' ? 1 : 0.5), `above maximum ${schema.maximum}`]);
  return [fc.constantFrom(...candidates).map(([value, why]) => ({ value, mutation: at(pointer, why) }))];
}

function invalidArrays(schema: Schema, scope: Scope, pointer: string, deeper: boolean): fc.Arbitrary<Mutant>[] {
  const items: Schema = schema.items ?? {};
  const inner = { ...scope, depth: scope.depth + 1 };
  const out: fc.Arbitrary<Mutant>[] = [];
  if (schema.minItems) out.push(fc.constant({ value: [], mutation: at(pointer, `fewer than minItems ${schema.minItems}`) }));
  if (schema.maxItems !== undefined) {
    out.push(
      validValue(items, inner).map((item) => ({
        value: Array(schema.maxItems + 1).fill(item),
        mutation: at(pointer, `more than maxItems ${schema.maxItems}`),
      })),
    );
  }
  if (deeper) {
    const min = Math.max(schema.minItems ?? 0, 1);
    out.push(
      fc
        .tuple(fc.array(validValue(items, inner), { minLength: min, maxLength: min + 1 }), fc.nat())
        .chain(([list, n]) => invalidValue(items, inner, `${pointer}/${n % list.length}`).map((bad) => ({ list, index: n % list.length, bad })))
        .map(({ list, index, bad }) => ({ value: list.map((item, i) => (i === index ? bad.value : item)), mutation: bad.mutation })),
    );
  }
  return out;
}

const escapeSegment = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

function invalidObjects(schema: Schema, scope: Scope, pointer: string, deeper: boolean): fc.Arbitrary<Mutant>[] {
  const view = objectView(schema, scope);
  const valid = validObject(schema, scope);
  const out: fc.Arbitrary<Mutant>[] = [];
  const required = view.required.filter((name) => name in view.properties);
  if (required.length > 0) {
    out.push(
      fc.tuple(valid, fc.constantFrom(...required)).map(([value, name]) => {
        const { [name]: _gone, ...rest } = value;
        return { value: rest, mutation: at(`${pointer}/${escapeSegment(name)}`, 'required, left out') };
      }),
    );
  }
  if (view.closed) {
    out.push(
      fc.tuple(valid, fc.constantFrom('bogus', 'Name', '__proto__', 'constructor', 'unknown field')).map(([value, name]) => ({
        value: { ...value, [name]: 1 },
        mutation: at(`${pointer}/${escapeSegment(name)}`, 'not a field of this closed object'),
      })),
    );
  }
  if (view.additional) {
    out.push(fc.constant({ value: { key: 42 }, mutation: at(`${pointer}/key`, 'a value the additionalProperties schema rejects') }));
  }
  if (view.maxProperties !== undefined) {
    const many = Object.fromEntries(Array.from({ length: view.maxProperties + 1 }, (_, i) => [`k${i}`, 'v']));
    out.push(fc.constant({ value: many, mutation: at(pointer, `more than maxProperties ${view.maxProperties}`) }));
  }
  if (view.nameMaxLength !== undefined) {
    out.push(fc.constant({ value: { ['n'.repeat(view.nameMaxLength + 1)]: 'v' }, mutation: at(pointer, `a property name longer than ${view.nameMaxLength}`) }));
  }
  const names = Object.keys(view.properties);
  if (deeper && names.length > 0) {
    out.push(
      fc.constantFrom(...names).chain((name) => {
        const { schema: property, scope: declared } = view.properties[name];
        const bad = invalidValue(property, { ...declared, depth: scope.depth + 1 }, `${pointer}/${escapeSegment(name)}`);
        return fc.tuple(valid, bad).map(([value, mutant]) => ({ value: { ...value, [name]: mutant.value }, mutation: mutant.mutation }));
      }),
    );
  }
  return out;
}
