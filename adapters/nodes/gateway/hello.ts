// The checks a hello passes before the store is asked anything: the challenge
// is still open, the proof is the key's and answers this challenge's nonce,
// the catalog is within the limits and is the one its hash names, and the two
// protocol ranges meet. A refusal names the close code; nothing was written.
import type { NodeHelloFrame } from '../../../generated/protocol-schemas.js';
import { catalogFault, catalogHash } from '../../../core/surfaces/nodes/wire/catalog.js';
import { NODE_CLOSE, type NodeCloseCode } from '../../../core/surfaces/nodes/wire/close-codes.js';
import { MAX_PROTOCOL, MIN_PROTOCOL } from '../../../core/surfaces/nodes/wire/limits.js';
import { proofFault } from '../../../core/surfaces/nodes/wire/node-identity.js';

export interface Refusal {
  code: NodeCloseCode;
  reason: string;
}

/** What a connection asked its node to sign. */
export interface OpenChallenge {
  nonce: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** The protocol version both sides speak (the highest in common), or null. */
export function commonProtocol(min: number, max: number): number | null {
  const high = Math.min(max, MAX_PROTOCOL);
  return min <= max && Math.max(min, MIN_PROTOCOL) <= high ? high : null;
}

/** Why the hello is refused, or null when its proof holds for this challenge. */
export function helloRefusal(hello: NodeHelloFrame, challenge: OpenChallenge, now: number = Date.now()): Refusal | null {
  const { proof } = hello;
  if (now >= challenge.expiresAt) return { code: NODE_CLOSE.challengeExpired, reason: 'the challenge expired' };
  const fault = proofFault(proof);
  if (fault) return { code: NODE_CLOSE.invalidProof, reason: fault };
  if (proof.nonce !== challenge.nonce) return { code: NODE_CLOSE.invalidProof, reason: "the proof answers another challenge's nonce" };
  const tooLarge = catalogFault(proof.catalog);
  if (tooLarge) return { code: NODE_CLOSE.catalogTooLarge, reason: tooLarge };
  if (catalogHash(proof.catalog) !== proof.catalog_hash) return { code: NODE_CLOSE.invalidProof, reason: 'the catalog hash does not match the catalog' };
  if (commonProtocol(proof.min_protocol, proof.max_protocol) === null)
    return { code: NODE_CLOSE.incompatibleProtocol, reason: `no protocol version in common (the hub speaks ${MIN_PROTOCOL} to ${MAX_PROTOCOL})` };
  return null;
}
