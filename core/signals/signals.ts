// Signals (see signal-port.ts): every signal travels on one store channel, so a
// process LISTENs once, on its first listener, and hands each notification to
// the listeners of its name. The name and the payload are checked once, here,
// before anything is sent.
import { PalaiError } from '../errors/palai-error.js';
import type { Logger } from '../logger.js';
import type { Db, Queryable } from '../store/db.js';
import { MAX_SIGNAL_NAME_LENGTH, MAX_SIGNAL_PAYLOAD_BYTES, SIGNAL_CHANNEL, SIGNAL_NAME_SYNTAX, type SignalListener, type Signals } from './signal-port.js';

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name.length > MAX_SIGNAL_NAME_LENGTH || !SIGNAL_NAME_SYNTAX.test(name)) {
    const detail =
      `A signal's name is 1 to ${MAX_SIGNAL_NAME_LENGTH} lower-case letters, digits, "_" and "-" ` +
      `in dot-separated parts (such as "nodes.connected"); got ${JSON.stringify(name)}.`;
    throw new PalaiError('validation-failed', detail, { errors: [{ pointer: '/name', detail }] });
  }
  return name;
}

function checkPayload(payload: unknown): string {
  if (typeof payload !== 'string')
    throw new PalaiError('validation-failed', "A signal's payload is a text.", { errors: [{ pointer: '/payload', detail: 'not a text' }] });
  const bytes = Buffer.byteLength(payload, 'utf8');
  if (bytes > MAX_SIGNAL_PAYLOAD_BYTES) {
    throw new PalaiError('payload-too-large', `A signal's payload is at most ${MAX_SIGNAL_PAYLOAD_BYTES} bytes; this one has ${bytes}.`, {
      errors: [{ pointer: '/payload', detail: `${bytes} bytes` }],
    });
  }
  return payload;
}

/** Sends a signal from the caller's connection or transaction: in a transaction it goes out at commit, and never on a rollback. */
export async function notifySignal(q: Queryable, name: string, payload = ''): Promise<void> {
  await q.query('SELECT pg_notify($1, $2)', [SIGNAL_CHANNEL, `${checkName(name)}:${checkPayload(payload)}`]);
}

/** The Signals port of one process over `db`; `logger` hears of listeners that throw. */
export function createSignals(db: Db, logger: Logger): Signals {
  const listeners = new Map<string, Set<SignalListener>>();
  let listening: Promise<unknown> | null = null;

  const deliver = (message: string) => {
    const colon = message.indexOf(':');
    if (colon < 0) return;
    const name = message.slice(0, colon);
    for (const listener of [...(listeners.get(name) ?? [])]) {
      try {
        listener(message.slice(colon + 1));
      } catch (error) {
        logger.warn({ err: error, signal: name }, 'a signal listener threw; the other listeners still ran');
      }
    }
  };

  return {
    notify: (name, payload = '') => notifySignal(db, name, payload),

    async listen(name, listener) {
      checkName(name);
      if (typeof listener !== 'function') throw new TypeError('a signal listener is a function');
      // A LISTEN that failed (the store out of reach) is tried again by the next listener.
      listening ??= db.listen(SIGNAL_CHANNEL, deliver).catch((error: unknown) => {
        listening = null;
        throw error;
      });
      await listening;
      let set = listeners.get(name);
      if (!set) listeners.set(name, (set = new Set()));
      const mine = set;
      const own = (payload: string) => listener(payload);
      mine.add(own);
      return async () => {
        mine.delete(own);
        if (mine.size === 0 && listeners.get(name) === mine) listeners.delete(name);
      };
    },
  };
}
