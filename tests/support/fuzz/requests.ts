// Requests to one operation of the document, mostly hostile: bodies from the
// body schema (valid-ish, wrong in one place, with unstorable text, nested too
// deep, not JSON at all, too large), hostile path segments, query values from the
// query parameters' schemas, and the headers Palai reads. Each case is plain data,
// so fast-check prints a counterexample that reads as the request it was.
import fc from 'fast-check';
import { MAX_JSON_DEPTH } from '../../../core/json-guard.js';
import type { OperationDescriptor, OperationId } from '../../../generated/operations.js';
import { component, parametersOf } from './document.js';
import { invalidValue, OMIT, storableString, validValue, type Hints, type Mutant } from './schema-values.js';

/** Where the deeply nested value goes in a JSON body; replaced on the wire (so counterexamples stay short). */
export const DEEP_MARKER = 'DEEPLY-NESTED-VALUE-HERE';

export type BodyCase =
  | { kind: 'json'; value: unknown; mutation: string; deep?: { depth: number; shape: 'object' | 'array' } }
  | { kind: 'text'; text: string; mutation: string }
  | { kind: 'bytes'; bytes: number[]; mutation: string }
  | { kind: 'oversized'; size: number };

export type EncodingCase = { name: 'gzip' | 'deflate' | 'br' | 'identity'; corrupt?: 'garbage' | 'truncated' } | { name: string; unknown: true };

export interface FuzzCase {
  operation: OperationId;
  method: string;
  /** Path parameter → its segment as sent (percent-encoded, possibly badly). */
  path: Record<string, string>;
  /** The query string as sent, without `?`. */
  query: string;
  headers: Record<string, string>;
  body: BodyCase | null;
  encoding: EncodingCase | null;
}

/** What the hub under test holds, so valid-ish requests name things that exist. */
export interface World {
  apiKey: string;
  maxBodyBytes: number;
  /** Per operation and path parameter, values that name real resources. */
  pathValues: Partial<Record<OperationId, Record<string, string[]>>>;
  /** Body hints (see schema-values.ts). */
  hints: Hints;
  /** Ids usable as `after` cursors. */
  cursors: string[];
  /** The last journaled sequence of the responses in pathValues of the stream operations. */
  lastSequence: number;
}

// ---- text -------------------------------------------------------------------

/** Text no store can hold: U+0000, and lone surrogates of both halves. */
export const unstorableText = fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udbff', '\udc00', 'tail\ud83d', '\ude00head');

/** Percent-encodes as UTF-8, and a lone surrogate as the (invalid) bytes it would take in WTF-8. */
export function encodeSegment(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(char);
  }
  return out;
}

const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('%00', 'a%00b', '%', '%zz', '%E0%A4%A', '%C0%80', '%ED%A0%80', '%FF%FE', '..', '.', '%2F', 'a%2Fb', '%20', '~', '%F0%9F%98%80'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }).map(encodeSegment),
  fc.integer({ min: 129, max: 4000 }).map((n) => 'x'.repeat(n)),
  fc.tuple(fc.constantFrom('agt_', 'resp_', 'ses_', 'mconn_'), storableString(0, 30)).map(([prefix, rest]) => encodeSegment(prefix + rest)),
);

// ---- bodies -------------------------------------------------------------------

/** Slots of a small JSON value (iteratively, so any depth is safe). */
function slots(value: unknown): { containers: unknown[]; strings: [unknown, string | number][]; keyed: Record<string, unknown>[] } {
  const containers: unknown[] = [];
  const strings: [unknown, string | number][] = [];
  const keyed: Record<string, unknown>[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (current === null || typeof current !== 'object') continue;
    containers.push(current);
    const entries: [string | number, unknown][] = Array.isArray(current) ? current.map((v, i) => [i, v]) : Object.entries(current);
    if (!Array.isArray(current) && entries.length > 0) keyed.push(current as Record<string, unknown>);
    for (const [key, child] of entries) {
      if (typeof child === 'string') strings.push([current, key]);
      else stack.push(child);
    }
  }
  return { containers, strings, keyed };
}

const clone = <T>(value: T): T => structuredClone(value);

/** Puts unstorable text into a string value or a member name of `mutant`. */
function withUnstorable(mutant: Mutant, pick: number, text: string, inName: boolean): Mutant {
  const value = clone(mutant.value);
  const { strings, keyed } = slots(value);
  if (inName && keyed.length > 0) {
    const target = keyed[pick % keyed.length];
    const [name] = Object.keys(target);
    const renamed = Object.fromEntries(Object.entries(target).map(([k, v]) => [k === name ? name + text : k, v]));
    for (const k of Object.keys(target)) delete target[k];
    Object.assign(target, renamed);
    return { value, mutation: `${mutant.mutation}; member name ${JSON.stringify(name)} + ${JSON.stringify(text)}` };
  }
  if (strings.length > 0) {
    const [holder, key] = strings[pick % strings.length];
    (holder as Record<string | number, string>)[key] += text;
    return { value, mutation: `${mutant.mutation}; ${JSON.stringify(text)} appended to a string` };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return { value: { ...value, note: text }, mutation: `${mutant.mutation}; ${JSON.stringify(text)} as a new member` };
  }
  return { value: text, mutation: `the whole body is ${JSON.stringify(text)}` };
}

/** Marks where a deeply nested value replaces (or joins) part of `mutant`. */
function withDeepMarker(mutant: Mutant, pick: number): unknown {
  const value = clone(mutant.value);
  const { containers } = slots(value);
  if (containers.length === 0) return DEEP_MARKER;
  const target = containers[pick % containers.length];
  if (Array.isArray(target)) target.push(DEEP_MARKER);
  else (target as Record<string, unknown>).nested = DEEP_MARKER;
  return value;
}

const NOT_JSON = [
  '{"name": "half',
  '{"a":1,}',
  '{a:1}',
  "{'a':1}",
  '"just a string"',
  '42',
  'null',
  'true',
  '',
  ' ',
  '\ufeff{}',
  '{"a":NaN}',
  '{"a":1e999}',
  '{}{}',
  '{"a":"raw \u0000 byte"}',
  '/* comment */ {}',
  '['.repeat(3000),
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
];

function bodyCases(op: OperationDescriptor, world: World): fc.Arbitrary<BodyCase | null> {
  if (!op.bodySchema) {
    // Operations without a body ignore one; send junk now and then anyway.
    return fc.oneof(
      { weight: 6, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom(...NOT_JSON).map((text): BodyCase => ({ kind: 'text', text, mutation: 'a body this operation does not take' })) },
    );
  }
  const scope = { hints: world.hints, component: op.bodySchema, depth: 0 };
  const schema = component(op.bodySchema);
  const valid = validValue(schema, scope).map((value): Mutant => ({ value, mutation: 'valid-ish' }));
  const invalid = invalidValue(schema, scope);
  const either = fc.oneof(valid, invalid);
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((m): BodyCase => ({ kind: 'json', ...m })) },
    { weight: 4, arbitrary: invalid.map((m): BodyCase => ({ kind: 'json', ...m })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(either, fc.nat(), unstorableText, fc.boolean())
        .map(([m, pick, text, inName]): BodyCase => ({ kind: 'json', ...withUnstorable(m, pick, text, inName) })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          either,
          fc.nat(),
          fc.oneof(fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 3 }), fc.integer({ min: MAX_JSON_DEPTH + 1, max: 6000 })),
          fc.constantFrom('object' as const, 'array' as const),
        )
        .map(([m, pick, depth, shape]): BodyCase => ({
          kind: 'json',
          value: withDeepMarker(m, pick),
          mutation: `${m.mutation}; ${depth} levels of ${shape}s nested in`,
          deep: { depth, shape },
        })),
    },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom(...NOT_JSON).map((text): BodyCase => ({ kind: 'text', text, mutation: 'not JSON, or not an object or array' })),
        valid.chain((m) => {
          const text = JSON.stringify(m.value);
          return fc
            .integer({ min: 0, max: Math.max(0, text.length - 1) })
            .map((n): BodyCase => ({ kind: 'text', text: text.slice(0, n), mutation: 'valid JSON cut short' }));
        }),
        fc.uint8Array({ minLength: 1, maxLength: 48 }).map((bytes): BodyCase => ({ kind: 'bytes', bytes: [...bytes], mutation: 'random bytes' })),
        fc
          .constantFrom(
            [0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d],
            [0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d],
            [0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00],
          )
          .map((bytes): BodyCase => ({ kind: 'bytes', bytes: [...bytes], mutation: 'JSON with invalid UTF-8, or UTF-16' })),
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 2048 }).map((extra): BodyCase => ({ kind: 'oversized', size: world.maxBodyBytes + extra })) },
    { weight: 1, arbitrary: fc.constant(null) },
  );
}

// ---- path and query -------------------------------------------------------------

function pathCases(op: OperationDescriptor, world: World): fc.Arbitrary<Record<string, string>> {
  const model: Record<string, fc.Arbitrary<string>> = {};
  for (const param of parametersOf(op, 'path')) {
    const known = world.pathValues[op.operationId]?.[param.name] ?? [];
    model[param.name] =
      known.length > 0
        ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known).map(encodeSegment) }, { weight: 2, arbitrary: hostileSegment })
        : hostileSegment;
  }
  return fc.record(model);
}

const hostileQueryValue = fc.constantFrom(
  '%00',
  'a%00',
  '',
  '%',
  '%zz',
  '1e309',
  '-2',
  '-1',
  '0x10',
  '%201',
  'NaN',
  'Infinity',
  '1.5',
  '99999999999999999999',
  '2147483648',
  'true',
  '%ED%A0%80',
);

function queryCases(op: OperationDescriptor, world: World): fc.Arbitrary<string> {
  const pairs: fc.Arbitrary<[string, string][]>[] = [];
  for (const param of parametersOf(op, 'query')) {
    const scope = { hints: {}, component: op.operationId, depth: 0 };
    let valid: fc.Arbitrary<string> = validValue(param.schema, scope).map((v) => encodeSegment(String(v)));
    if (param.name === 'starting_after') valid = fc.integer({ min: -1, max: world.lastSequence }).map(String);
    if (param.name === 'after' && world.cursors.length > 0) valid = fc.oneof(valid, fc.constantFrom(...world.cursors));
    const invalid = fc.oneof(
      invalidValue(param.schema, scope).map((m) => encodeSegment(String(m.value))),
      hostileQueryValue,
    );
    pairs.push(
      fc.oneof(
        { weight: 3, arbitrary: fc.constant<[string, string][]>([]) },
        { weight: 3, arbitrary: valid.map((v): [string, string][] => [[param.name, v]]) },
        { weight: 3, arbitrary: invalid.map((v): [string, string][] => [[param.name, v]]) },
        {
          weight: 1,
          arbitrary: fc.tuple(valid, invalid).map(([a, b]): [string, string][] => [
            [param.name, a],
            [param.name, b],
          ]),
        },
      ),
    );
  }
  const unknown = fc.oneof(
    { weight: 4, arbitrary: fc.constant<[string, string][]>([]) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', '%00', 'limit[]', '__proto__'), hostileQueryValue).map((p): [string, string][] => [p]) },
  );
  return fc.tuple(...pairs, unknown).map((groups) =>
    groups
      .flat()
      .map(([k, v]) => `${k}=${v}`)
      .join('&'),
  );
}

// ---- headers ------------------------------------------------------------------

/** An arbitrary for one header: its value, or OMIT to leave it out. Values are bytes Node's client may send. */
const header = (usual: fc.Arbitrary<string | typeof OMIT>, hostile: fc.Arbitrary<string | typeof OMIT>, hostileWeight = 1) =>
  fc.oneof({ weight: 12, arbitrary: usual }, { weight: hostileWeight, arbitrary: hostile });

function headerCases(op: OperationDescriptor, world: World): fc.Arbitrary<[Record<string, string>, EncodingCase | null]> {
  const valid = `Bearer ${world.apiKey}`;
  const authorization = header(
    fc.constant(valid),
    fc.constantFrom(
      OMIT,
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer ',
      `${valid}x`,
      `bearer ${world.apiKey}`,
      `${valid} extra`,
      `Bearer\t${world.apiKey}`,
      `Bearer ${'k'.repeat(8000)}`,
      'Bearer \xe9\xff\x80',
      `Bearer ${world.apiKey}\xa0`,
    ),
  );
  const idempotencyKey = header(
    fc.constant(OMIT),
    fc.oneof(fc.stringMatching(/^[\x21-\x7e]{1,40}$/), fc.constantFrom('', ' ', 'x'.repeat(256), 'k\xe9y', 'a b', '\t', 'x'.repeat(255))),
    3,
  );
  const lastEventId = header(
    fc.constant(OMIT),
    fc.oneof(
      fc.integer({ min: -1, max: world.lastSequence }).map(String),
      fc.constantFrom('-2', 'abc', '1.5', '1e3', '99999999999', '2147483648', '', ' 3', '0x1', '\xe9', String(world.lastSequence + 1)),
    ),
    3,
  );
  const contentType = header(
    fc.constant('application/json'),
    fc.constantFrom(
      OMIT,
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset=nonsense',
      'application/json; charset=',
      'application/json;;;',
      'application/json; boundary',
      'application/*',
      'application/merge-patch+json',
      'application/vnd.api+json',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      '',
      'json',
      '\xe9/\xe9',
    ),
    2,
  );
  const encoding: fc.Arbitrary<EncodingCase | null> = fc.oneof(
    { weight: 12, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: fc.constantFrom('gzip' as const, 'deflate' as const, 'br' as const, 'identity' as const).map((name): EncodingCase => ({ name })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('gzip' as const, 'deflate' as const, 'br' as const), fc.constantFrom('garbage' as const, 'truncated' as const))
        .map(([name, corrupt]): EncodingCase => ({ name, corrupt })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('zstd', 'compress', 'x-gzip', 'gzip, gzip', 'GZIP', 'identity, gzip', '')
        .map((name): EncodingCase => ({ name, unknown: true })),
    },
  );
  const accept = header(fc.constant(OMIT), fc.constantFrom('text/event-stream', 'application/xml', '*/*', 'application/problem+json'));
  const model: Record<string, fc.Arbitrary<string | typeof OMIT>> = { accept, 'last-event-id': lastEventId };
  if (op.authenticated) model.authorization = authorization;
  if (op.method === 'POST') Object.assign(model, { 'idempotency-key': idempotencyKey, 'content-type': contentType });
  return fc
    .tuple(fc.record(model), op.method === 'POST' ? encoding : fc.constant(null))
    .map(([headers, enc]) => [Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== OMIT)) as Record<string, string>, enc]);
}

/** Requests to `op`, mostly hostile in one or more of path, query, headers and body. */
export function fuzzCases(op: OperationDescriptor, world: World): fc.Arbitrary<FuzzCase> {
  return fc
    .record({ path: pathCases(op, world), query: queryCases(op, world), headers: headerCases(op, world), body: bodyCases(op, world) })
    .map(({ path, query, headers: [headers, encoding], body }): FuzzCase => ({
      operation: op.operationId,
      method: op.method,
      path,
      query,
      headers,
      body,
      encoding,
    }));
}
