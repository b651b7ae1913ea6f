// Identities, catalogs and signed proofs for node tests, built with the wire
// modules both sides share: what a companion would present, without running one.
import { randomBytes } from 'node:crypto';
import type { NodeIdentityProof } from '../../generated/protocol-schemas.js';
import type { NodeCatalog, NodeCommandDescriptor } from '../../generated/schemas.js';
import { catalogHash } from '../../core/surfaces/nodes/wire/catalog.js';
import { generateIdentity, signProof } from '../../core/surfaces/nodes/wire/node-identity.js';
import { MAX_PROTOCOL, MIN_PROTOCOL } from '../../core/surfaces/nodes/wire/limits.js';

export interface TestIdentity {
  privateKeyPem: string;
  publicKey: string;
  nodeId: string;
}

export const newIdentity = (): TestIdentity => generateIdentity();

/** A command descriptor as a companion derives it; `overrides` change it (a changed descriptor has another hash). */
export function descriptor(name: string, overrides: Partial<NodeCommandDescriptor> = {}): NodeCommandDescriptor {
  return {
    name,
    risk: 'privileged',
    description: `${name} on the test node`,
    input_schema: { type: 'object', properties: { script: { type: 'string' } }, additionalProperties: true },
    max_timeout_seconds: 600,
    max_output_bytes: 262_144,
    ...overrides,
  };
}

/** The catalog of the example config: shell.exec.v1 and system.exec.v1. */
export const execCatalog = (): NodeCatalog => ({ commands: [descriptor('shell.exec.v1'), descriptor('system.exec.v1')] });

export interface ProofOptions {
  nonce?: string;
  catalog?: NodeCatalog;
  /** Claimed instead of the catalog's own hash. */
  catalogHash?: string;
  displayName?: string;
  clientVersion?: string;
}

/** The identity's signed answer to a challenge (a fresh nonce unless given). */
export function proofFor(identity: TestIdentity, options: ProofOptions = {}): NodeIdentityProof {
  const catalog = options.catalog ?? execCatalog();
  return signProof(identity.privateKeyPem, {
    node_id: identity.nodeId,
    public_key: identity.publicKey,
    nonce: options.nonce ?? randomBytes(16).toString('base64url'),
    min_protocol: MIN_PROTOCOL,
    max_protocol: MAX_PROTOCOL,
    client_version: options.clientVersion ?? '0.1.0-test',
    platform: 'linux',
    architecture: 'x64',
    ...(options.displayName ? { display_name: options.displayName } : {}),
    catalog,
    catalog_hash: options.catalogHash ?? catalogHash(catalog),
  });
}
