// Letting a verified identity in (the gateway checked its proof): a known key
// is its node, its advertised catalog recorded; an unknown one enrolls with a
// usable token as `pending_pairing`. A refusal throws before anything commits,
// so a refused hello writes nothing.
import type { NodeIdentityProof } from '../../../generated/protocol-schemas.js';
import type { Db, Queryable } from '../../store/db.js';
import { useEnrollment } from './enrollments.js';
import { NodeAdmissionRefused, type NodeAdmission } from './node-gateway-port.js';
import { nodeById } from './nodes.js';
import { boundedMessage, usableDescriptors, type NodeRow } from './node-views.js';
import { catalogFault, catalogHash } from './wire/catalog.js';
import { NODE_CLOSE } from './wire/close-codes.js';
import { proofFault } from './wire/node-identity.js';
import { MAX_PENDING_PAIRINGS, MAX_PROTOCOL } from './wire/limits.js';

export const admissionOf = (row: NodeRow): NodeAdmission => ({
  nodeId: row.id,
  projectId: row.project_id,
  state: row.state,
  allowedCommands: row.allowed_commands,
  usableCommands: usableDescriptors(row).map((d) => d.name),
  approvedCatalogHash: row.approved_catalog_hash,
});

const protocolOf = (proof: NodeIdentityProof): number => Math.min(proof.max_protocol, MAX_PROTOCOL);

async function enroll(tx: Queryable, proof: NodeIdentityProof, token: string | undefined): Promise<void> {
  const refused = () =>
    new NodeAdmissionRefused(NODE_CLOSE.enrollmentRefused, 'unknown node: present a usable enrollment token (unknown, expired, revoked or used up)');
  if (!token) throw refused();
  const enrollment = await useEnrollment(tx, token);
  if (!enrollment) throw refused();
  // One admission at a time per project, so the pending count cannot be overtaken.
  await tx.query('SELECT id FROM projects WHERE id = $1 FOR UPDATE', [enrollment.project_id]);
  const { rows } = await tx.query<{ pending: number }>(
    'SELECT count(*)::int AS pending FROM nodes WHERE project_id = $1 AND approved_at IS NULL AND revoked_at IS NULL',
    [enrollment.project_id],
  );
  if (rows[0].pending >= MAX_PENDING_PAIRINGS) {
    throw new NodeAdmissionRefused(NODE_CLOSE.busy, `the project has ${MAX_PENDING_PAIRINGS} nodes waiting for approval already`);
  }
  await tx.query(
    `INSERT INTO nodes (id, project_id, public_key, enrollment_id, display_name, platform, architecture, client_version, protocol_version, catalog, catalog_hash, connected_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL)`,
    [
      proof.node_id,
      enrollment.project_id,
      proof.public_key,
      enrollment.id,
      proof.display_name ?? null,
      proof.platform,
      proof.architecture,
      proof.client_version,
      protocolOf(proof),
      JSON.stringify(proof.catalog),
      proof.catalog_hash,
    ],
  );
}

/** The gateway checked these already; checked again here so the store never records a catalog a node could not have proven. */
function checkProof(proof: NodeIdentityProof): void {
  const fault = proofFault(proof);
  if (fault) throw new NodeAdmissionRefused(NODE_CLOSE.invalidProof, fault);
  if (catalogHash(proof.catalog) !== proof.catalog_hash) throw new NodeAdmissionRefused(NODE_CLOSE.invalidProof, 'the catalog hash does not match the catalog');
  const tooLarge = catalogFault(proof.catalog);
  if (tooLarge) throw new NodeAdmissionRefused(NODE_CLOSE.catalogTooLarge, tooLarge);
}

export async function admit(db: Db, proof: NodeIdentityProof, token: string | undefined): Promise<NodeAdmission> {
  checkProof(proof);
  return db.transaction(async (tx) => {
    const known = await nodeById(tx, proof.node_id, true);
    if (known) {
      if (known.revoked_at) throw new NodeAdmissionRefused(NODE_CLOSE.revoked, 'this node was revoked');
      await tx.query(
        `UPDATE nodes SET catalog = $2, catalog_hash = $3, platform = $4, architecture = $5, client_version = $6, protocol_version = $7,
           display_name = coalesce(display_name, $8), updated_at = now() WHERE id = $1`,
        [
          known.id,
          JSON.stringify(proof.catalog),
          proof.catalog_hash,
          proof.platform,
          proof.architecture,
          proof.client_version,
          protocolOf(proof),
          proof.display_name ?? null,
        ],
      );
    } else {
      await enroll(tx, proof, token);
    }
    return admissionOf((await nodeById(tx, proof.node_id))!);
  });
}

export async function admission(db: Queryable, nodeId: string): Promise<NodeAdmission | null> {
  const row = await nodeById(db, nodeId);
  return row ? admissionOf(row) : null;
}

export async function markConnected(db: Queryable, nodeId: string): Promise<void> {
  await db.query('UPDATE nodes SET connected_at = now(), last_seen_at = now(), disconnect_reason = NULL WHERE id = $1', [nodeId]);
}

export async function markSeen(db: Queryable, nodeId: string): Promise<void> {
  // A heartbeat is a live connection, even after a late "disconnected" from a connection it replaced on another process.
  await db.query('UPDATE nodes SET last_seen_at = now(), connected_at = coalesce(connected_at, now()), disconnect_reason = NULL WHERE id = $1', [nodeId]);
}

export async function markDisconnected(db: Queryable, nodeId: string, reason: string): Promise<void> {
  await db.query('UPDATE nodes SET connected_at = NULL, last_seen_at = now(), disconnect_reason = $2 WHERE id = $1', [nodeId, boundedMessage(reason)]);
}
