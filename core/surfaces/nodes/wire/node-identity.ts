// A node's identity: an ed25519 key pair it keeps, an id derived from the public
// key (so the id is the key's, stable across restarts and re-pairings), and the
// proof it signs over a hub's challenge.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import type { NodeIdentityProof } from '../../../../generated/protocol-schemas.js';
import { canonicalJson } from './canonical-hash.js';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const PROOF_CONTEXT = 'palai-node-proof-v1\n';

/** `node_` and the first 26 Crockford base32 digits (130 bits) of the SHA-256 of the raw public key. */
export function deriveNodeId(rawPublicKey: Buffer): string {
  const digest = createHash('sha256').update(rawPublicKey).digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 17)) bits = (bits << 8n) | BigInt(byte);
  bits >>= 6n; // 136 bits read, 130 kept
  let id = '';
  for (let i = 0; i < 26; i++) {
    id = CROCKFORD[Number(bits & 31n)] + id;
    bits >>= 5n;
  }
  return `node_${id}`;
}

/** A new key pair, the private key as PKCS#8 PEM (what the companion keeps, mode 0600). */
export function generateIdentity(): { privateKeyPem: string; publicKey: string; nodeId: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  return { privateKeyPem, ...identityOf(privateKeyPem) };
}

/** The public key (raw, base64url) and node id of a PEM private key; throws when it is not an ed25519 key. */
export function identityOf(privateKeyPem: string): { publicKey: string; nodeId: string } {
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('the identity key is not an ed25519 key');
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  const raw = Buffer.from(String(jwk.x), 'base64url');
  return { publicKey: raw.toString('base64url'), nodeId: deriveNodeId(raw) };
}

type UnsignedProof = Omit<NodeIdentityProof, 'signature'>;

/** The bytes a proof's signature covers. */
const signedBytes = (proof: UnsignedProof): Buffer => Buffer.from(PROOF_CONTEXT + canonicalJson(proof), 'utf8');

export function signProof(privateKeyPem: string, proof: UnsignedProof): NodeIdentityProof {
  const signature = sign(null, signedBytes(proof), createPrivateKey(privateKeyPem)).toString('base64url');
  return { ...proof, signature };
}

function publicKeyObject(publicKey: string): KeyObject | null {
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
  } catch {
    return null;
  }
}

/** Why a proof does not hold, or null when its signature and its id are the key's. */
export function proofFault(proof: NodeIdentityProof): string | null {
  const raw = Buffer.from(proof.public_key, 'base64url');
  if (raw.length !== 32) return 'the public key is not 32 bytes';
  if (deriveNodeId(raw) !== proof.node_id) return 'the node id is not derived from the public key';
  const key = publicKeyObject(proof.public_key);
  if (!key) return 'the public key is not an ed25519 key';
  const { signature, ...unsigned } = proof;
  const bytes = Buffer.from(signature, 'base64url');
  if (bytes.length !== 64 || !verify(null, signedBytes(unsigned), key, bytes)) return 'the signature does not verify';
  return null;
}
