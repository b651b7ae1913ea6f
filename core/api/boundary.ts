// The kernel API's boundary: every call a surface makes into the kernel, or
// into its wing, passes here once, so every surface gets the same two answers
// without checking for them itself:
//   - text the store cannot hold (U+0000, a lone UTF-16 surrogate) anywhere in
//     a call's arguments — an id, a cursor, a client's name, a tool's arguments
//     — is refused as `validation-failed`, naming where it is, before anything
//     is read or written;
//   - a transient database error (a lost connection, a restart, a lost
//     serialization race) leaves as `store-unavailable`, with the driver's
//     error as its cause, so no surface classifies driver errors.
// Each surface maps those slugs to its own protocol's answer, like any other.
import { PalaiError } from '../errors/palai-error.js';
import { inspectJson, MAX_JSON_DEPTH } from '../json-guard.js';
import { isTransientStoreError } from '../store/transient.js';

/** Members that are services or values, not commands: handed out as they are. */
const OPEN_MEMBERS: ReadonlySet<PropertyKey> = new Set(['config', 'logger', 'metrics', 'lifecycle', 'egress', 'egressSockets']);

/** The few commands that answer at once rather than with a promise, and those that answer with a stream of events. */
const SYNC_COMMANDS: ReadonlySet<PropertyKey> = new Set(['fingerprint', 'useClient', 'recallKey']);
const STREAM_COMMANDS: ReadonlySet<PropertyKey> = new Set(['follow']);

const STORE_UNAVAILABLE =
  'The database cannot be reached right now; retry shortly (with the same idempotency key, a request that did go through is not carried out twice).';

/** The error a surface sees for `error`: a transient store failure as `store-unavailable`, anything else as it is. */
export function atBoundaryError(error: unknown): unknown {
  if (error instanceof PalaiError || !isTransientStoreError(error)) return error;
  return new PalaiError('store-unavailable', STORE_UNAVAILABLE, { cause: error });
}

/** Refuses arguments holding unstorable text (or nesting too deep to check), naming the argument and the place inside it (`/<argument>/<pointer>`). */
function assertStorableArguments(name: string, args: readonly unknown[]): void {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === null || (typeof arg !== 'string' && typeof arg !== 'object')) continue;
    const { errors, tooDeep } = inspectJson(arg, MAX_JSON_DEPTH);
    if (errors.length === 0) continue;
    const where = errors.map((e) => ({ pointer: `/${index}${e.pointer}`, detail: e.detail }));
    const detail = tooDeep
      ? `The request nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels, the maximum.`
      : `Text in the request ${errors[0].detail}.`;
    throw new PalaiError('validation-failed', detail, { errors: where, extensions: { command: name } });
  }
}

async function* translated<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (error) {
    throw atBoundaryError(error);
  }
}

const isAsyncGenerator = (value: unknown): value is AsyncGenerator<unknown> =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as AsyncGenerator<unknown>)[Symbol.asyncIterator] === 'function' &&
  typeof (value as AsyncGenerator<unknown>).next === 'function';

/** A refusal in the command's own form: thrown, as a rejected promise, or as a stream that fails when read. */
function refused(key: PropertyKey, refusal: unknown): unknown {
  if (SYNC_COMMANDS.has(key)) throw refusal;
  if (STREAM_COMMANDS.has(key)) {
    return (async function* () {
      throw refusal;
    })();
  }
  return Promise.reject(refusal);
}

function guardedCommand(key: PropertyKey, name: string, command: (...args: unknown[]) => unknown, self: object): (...args: unknown[]) => unknown {
  return (...args) => {
    try {
      assertStorableArguments(name, args);
    } catch (refusal) {
      return refused(key, refusal);
    }
    let result: unknown;
    try {
      result = command.apply(self, args);
    } catch (error) {
      throw atBoundaryError(error);
    }
    if (isAsyncGenerator(result)) return translated(result);
    if (result instanceof Promise) return result.catch((error: unknown) => Promise.reject(atBoundaryError(error)));
    return result;
  };
}

/**
 * `api` as surfaces must see it: every command (a function member, at any
 * depth) checked and translated at the boundary. Services (config, logger,
 * metrics, lifecycle, egress) pass through untouched.
 */
export function atBoundary<T extends object>(api: T, path = ''): T {
  const made = new Map<PropertyKey, unknown>();
  return new Proxy(api, {
    get(target, key, receiver): unknown {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof key === 'symbol' || (path === '' && OPEN_MEMBERS.has(key))) return value;
      if (made.has(key)) return made.get(key);
      const name = path ? `${path}.${key}` : key;
      let guarded: unknown = value;
      if (typeof value === 'function') guarded = guardedCommand(key, name, value as (...args: unknown[]) => unknown, target);
      else if (value !== null && typeof value === 'object') guarded = atBoundary(value, name);
      made.set(key, guarded);
      return guarded;
    },
  });
}
