// Hashes over RFC 8785 canonical JSON (the `canonicalize` package, by the RFC's
// author): key order and whitespace never change a hash, so the hub and a node
// agree on a catalog's, a descriptor's or a plan's hash whatever wrote them.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** RFC 8785 canonical JSON of a JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('not a JSON value');
  return text;
}

/** `sha256:` and the hex SHA-256 of the value's canonical JSON. */
export function canonicalHash(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;
}
