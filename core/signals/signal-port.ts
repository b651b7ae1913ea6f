// The signal port: a surface wakes its own processes elsewhere in the cluster —
// "node X connected", "trigger Y changed" — over the store's LISTEN/NOTIFY,
// without a broker of its own. A signal is only a hint: it may be lost (a
// listener reconnecting, a process starting), and it says nothing that is not
// in the store already. Whoever acts on one re-reads the store, and also polls,
// so a lost signal only delays the work; like NOTIFY palai_work for workers.
//
// Glossary
//   name      what the signal is about, `<wing>.<event>` by habit, checked once
//             here: lower-case letters, digits, `_` and `-`, in dot-separated
//             parts (`nodes.connected`); at most MAX_SIGNAL_NAME_LENGTH
//   payload   a short text for the listeners (an id), at most
//             MAX_SIGNAL_PAYLOAD_BYTES bytes of UTF-8; empty by default
//   listener  a function called in this process for every signal of one name,
//             including the ones this process sent
//
// Duties
//   - Send after the change a signal announces committed (or, inside the
//     kernel, in the change's own transaction: it is sent at its commit, and
//     never if it rolls back).
//   - A listener returns quickly and never throws on purpose; one that throws
//     is logged and the others still run.
//   - Nothing waits on a signal alone: every wait also has a poll.
//
// Reading order: this file, then signals.ts (one LISTEN per process, fanned out by name).

/** The one store channel every signal travels on; its payload is `<name>:<payload>`. */
export const SIGNAL_CHANNEL = 'palai_signals';

export const MAX_SIGNAL_NAME_LENGTH = 64;
/** Well under the store's own limit on a notification (8000 bytes). */
export const MAX_SIGNAL_PAYLOAD_BYTES = 1024;
export const SIGNAL_NAME_SYNTAX = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/;

export type SignalListener = (payload: string) => void;

export interface Signals {
  /** Sends the signal to every process listening for `name`; a bad name or payload is `validation-failed`, a payload too long `payload-too-large`. */
  notify(name: string, payload?: string): Promise<void>;
  /** Calls `listener` for each signal of `name` from now on; resolves once listening, to the function that stops it. */
  listen(name: string, listener: SignalListener): Promise<() => Promise<void>>;
}
