// A row's credentials (a model key, headers, queue credentials, bot tokens, a
// signing secret) are kept as references into the secret store. Its values are
// sealed in the transaction that writes the row, revealed for the one call that
// sends them, and removed in the transaction that deletes the row or replaces
// them. Without PALAI_SECRET_KEY nothing can be sealed: each owner says, in its
// own request's terms, what to do about it.
import { PalaiError } from '../errors/palai-error.js';
import type { Queryable } from '../store/db.js';
import { SecretUnavailableError, type SecretPurpose, type SecretRef, type SecretStore } from './secret-port.js';

/** How an owner seals its values. */
export interface Sealing {
  /** What the values are, recorded with them: one purpose for all, or one per value's name. */
  purpose: SecretPurpose | Readonly<Record<string, SecretPurpose>>;
  /** The problem to answer when the server has no PALAI_SECRET_KEY, given the name of the value being sealed. */
  noSecretKey: (name: string) => PalaiError;
}

/** The usual answer without a secret key: `<what> needs PALAI_SECRET_KEY to be set on the server.`, pointing at the field. */
export const needsSecretKey = (what: string, pointer: string): PalaiError =>
  new PalaiError('invalid-request', `${what} needs PALAI_SECRET_KEY to be set on the server.`, {
    errors: [{ pointer, detail: 'cannot be stored without PALAI_SECRET_KEY' }],
  });

type Values = Readonly<Record<string, string | null | undefined>>;
/** A reference for each value given; null for each one left out (null or undefined). */
export type Sealed<V extends Values> = {
  -readonly [K in keyof V]-?: undefined extends V[K] ? SecretRef | null : null extends V[K] ? SecretRef | null : SecretRef;
};
type Ids = Readonly<Record<string, string | null>>;
/** A value for each reference given; null where there was none. */
export type Revealed<I extends Ids> = { -readonly [K in keyof I]: null extends I[K] ? string | null : string };

/** Seals each value given, in order, in the caller's transaction (a row that is not written leaves no secret behind). */
export async function sealValues<V extends Values>(q: Queryable, secrets: SecretStore, projectId: string, sealing: Sealing, values: V): Promise<Sealed<V>> {
  const sealed: Array<[string, SecretRef | null]> = [];
  for (const [name, value] of Object.entries(values)) {
    if (value === null || value === undefined) {
      sealed.push([name, null]);
      continue;
    }
    const purpose = typeof sealing.purpose === 'string' ? sealing.purpose : sealing.purpose[name];
    const ref = await secrets.put(q, projectId, purpose, value).catch((error: unknown) => {
      if (error instanceof SecretUnavailableError && error.reason === 'no-secret-key') throw sealing.noSecretKey(name);
      throw error;
    });
    sealed.push([name, ref]);
  }
  return Object.fromEntries(sealed) as Sealed<V>;
}

/** The values behind the references, for the one call that sends them; null where a reference is null. */
export async function revealValues<I extends Ids>(q: Queryable, secrets: SecretStore, projectId: string, ids: I): Promise<Revealed<I>> {
  const values: Array<[string, string | null]> = [];
  for (const [name, id] of Object.entries(ids)) values.push([name, id === null ? null : await secrets.reveal(q, projectId, id)]);
  return Object.fromEntries(values) as Revealed<I>;
}

/** Removes the row's references that are set, in the transaction that drops or replaces them. */
export async function removeSealed(q: Queryable, secrets: SecretStore, projectId: string, ids: Iterable<string | null | undefined>): Promise<void> {
  for (const id of ids) if (id) await secrets.remove(q, projectId, id);
}

/** A named value kept in a row's JSON list by its reference (an HTTP header, say). */
export interface NamedSecret {
  name: string;
  secret_id: string;
  last4: string | null;
}

/** Seals a set of named values into the list a row keeps. */
export async function sealNamed(
  q: Queryable,
  secrets: SecretStore,
  projectId: string,
  sealing: Sealing,
  values: Readonly<Record<string, string>>,
): Promise<NamedSecret[]> {
  const sealed = await sealValues(q, secrets, projectId, sealing, values);
  return Object.entries(sealed).map(([name, ref]) => ({ name, secret_id: ref.id, last4: ref.last4 }));
}

/** The named values behind a row's list. */
export const revealNamed = (q: Queryable, secrets: SecretStore, projectId: string, stored: readonly NamedSecret[]): Promise<Record<string, string>> =>
  revealValues(q, secrets, projectId, Object.fromEntries(stored.map((s) => [s.name, s.secret_id])));
