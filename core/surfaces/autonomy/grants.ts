// Resource grants: what a person lets an objective's wakes act on. The call
// gate (action-gate.ts) admits a call with a target only inside an active
// grant of the target's type: `command` (`<node>/<command>`), `mcp`
// (`<server>/<tool>`), `channel` (a URL host) and `filesystem` (a node's file
// profile or working scope, `<node>/<name>`) are enforced; the other types are
// stored and listed for later enforcement.
import type { CreateObjectiveGrantRequest, ObjectiveGrant, ObjectiveGrantList, ObjectivePolicyDocument } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { unixSeconds } from '../../json.js';
import type { Db, Queryable } from '../../store/db.js';
import type { GateTarget } from '../../tools/call-gate-port.js';
import { assertOpen, requireObjective } from './objectives.js';

export const ENFORCED_GRANT_TYPES: ReadonlySet<string> = new Set(['command', 'mcp', 'channel', 'filesystem']);
/** The most grants an objective holds, revoked ones included. */
export const MAX_GRANTS = 256;

interface GrantRow {
  id: string;
  objective_id: string;
  type: ObjectiveGrant['type'];
  locator: string;
  access_mode: ObjectiveGrant['access_mode'];
  constraints: Record<string, unknown> | null;
  expires_at: Date | null;
  created_at: Date;
  revoked_at: Date | null;
  expired: boolean;
}

const SELECT_GRANT = 'SELECT g.*, coalesce(g.expires_at <= now(), false) AS expired FROM objective_grants g';

function grantView(row: GrantRow): ObjectiveGrant {
  return {
    id: row.id,
    object: 'objective_grant',
    objective_id: row.objective_id,
    type: row.type,
    locator: row.locator,
    access_mode: row.access_mode,
    constraints: row.constraints,
    expires_at: unixSeconds(row.expires_at),
    enforced: ENFORCED_GRANT_TYPES.has(row.type),
    status: row.revoked_at !== null ? 'revoked' : row.expired ? 'expired' : 'active',
    created_at: unixSeconds(row.created_at) ?? 0,
    revoked_at: unixSeconds(row.revoked_at),
  };
}

const invalid = (pointer: string, detail: string) =>
  new PalaiError('validation-failed', `The grant is not valid: ${pointer.slice(1)} ${detail}.`, { errors: [{ pointer, detail }] });

const PART = /^(\*|[A-Za-z0-9][A-Za-z0-9._:@-]{0,127})$/;
/** A name of a path inside a file profile: not `.` or `..`, no separator or wildcard. */
const INSIDE_NAME = /^(?!\.{1,2}$)[^/\\*\u0000]{1,255}$/;
const HOST = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/;

/** The locator in its type's form, or a validation problem. */
function checkLocator(type: string, locator: string): string {
  if (locator.includes('\u0000')) throw invalid('/locator', 'contains a NUL character');
  if (type === 'command' || type === 'mcp') {
    const parts = locator.split('/');
    const form = type === 'command' ? '<node>/<command>' : '<server>/<tool>';
    if (parts.length !== 2 || !parts.every((p) => PART.test(p))) throw invalid('/locator', `is not ${form} (each part a name or *)`);
    return locator;
  }
  if (type === 'channel') {
    const host = locator.toLowerCase();
    if (!HOST.test(host)) throw invalid('/locator', 'is not a host (api.example.com, *.example.com or host:port)');
    return host;
  }
  if (type === 'filesystem') {
    // A node's file profile or working scope by name, or a directory or file inside a profile by its path there:
    // the roots behind it are the node's, and it resolves every path there.
    const [node, profile, ...inside] = locator.split('/');
    const form = '<node>/<file profile or working scope>, or <node>/<file profile>/<path inside it>';
    if (profile === undefined || !PART.test(node) || !PART.test(profile)) throw invalid('/locator', `is not ${form} (node and profile each a name or *)`);
    if (inside.length > 0 && (profile === '*' || !inside.every((name) => INSIDE_NAME.test(name)))) {
      throw invalid('/locator', `is not ${form} (a path inside a named profile, its names without ., .., \\ or *)`);
    }
    return locator;
  }
  return locator;
}

const outsideScope = (pointer: string, detail: string) =>
  new PalaiError('invalid-request', `The grant is outside the approved policy: ${pointer.slice(1)} ${detail}.`, { errors: [{ pointer, detail }] });

/** What the approved policy cannot allow: a grant outside its scope. */
function checkScope(request: CreateObjectiveGrantRequest, document: ObjectivePolicyDocument | null): void {
  if (!document) return;
  const onlyObserve = document.consequence_classes.every((c) => c === 'observe');
  if (request.access_mode !== 'read' && onlyObserve) {
    throw outsideScope('/access_mode', `is ${request.access_mode}, and the policy allows observe calls only (a read grant)`);
  }
  if (request.type === 'mcp' && document.mcp_tools != null && !document.mcp_tools.some((entry) => locatorMatches(request.locator, entry))) {
    throw outsideScope('/locator', "names MCP tools outside the policy's mcp_tools");
  }
}

export async function createGrant(db: Db, projectId: string, objectiveId: string, request: CreateObjectiveGrantRequest): Promise<ObjectiveGrant> {
  const locator = checkLocator(request.type, request.locator);
  return db.transaction(async (tx) => {
    const objective = await requireObjective(tx, projectId, objectiveId, true);
    assertOpen(objective);
    const { rows: policy } = await tx.query<{ document: ObjectivePolicyDocument; future: boolean | null; count: string }>(
      `SELECT (SELECT document FROM objective_policies WHERE objective_id = $1 AND status = 'approved') AS document,
         CASE WHEN $2::bigint IS NULL THEN NULL ELSE to_timestamp($2::bigint) > now() END AS future,
         (SELECT count(*) FROM objective_grants WHERE objective_id = $1) AS count`,
      [objective.id, request.expires_at ?? null],
    );
    if (policy[0].future === false) throw invalid('/expires_at', 'is not in the future');
    if (Number(policy[0].count) >= MAX_GRANTS) throw new PalaiError('conflict', `Objective ${objective.id} holds ${MAX_GRANTS} grants, the most it may.`);
    checkScope({ ...request, locator }, policy[0].document);
    const { rows } = await tx.query<GrantRow>(
      `INSERT INTO objective_grants (id, objective_id, type, locator, access_mode, constraints, expires_at)
       VALUES (palai_new_id('grt'), $1, $2, $3, $4, $5, CASE WHEN $6::bigint IS NULL THEN NULL ELSE to_timestamp($6::bigint) END)
       RETURNING *, false AS expired`,
      [objective.id, request.type, locator, request.access_mode, request.constraints ? JSON.stringify(request.constraints) : null, request.expires_at ?? null],
    );
    return grantView(rows[0]);
  });
}

export async function listGrants(q: Queryable, projectId: string, objectiveId: string): Promise<ObjectiveGrantList> {
  const objective = await requireObjective(q, projectId, objectiveId);
  const { rows } = await q.query<GrantRow>(`${SELECT_GRANT} WHERE g.objective_id = $1 ORDER BY g.created_at, g.id`, [objective.id]);
  return { object: 'list', data: rows.map(grantView), has_more: false };
}

/** Idempotent: a revoked grant stays as it was revoked. */
export async function revokeGrant(db: Db, projectId: string, objectiveId: string, grantId: string): Promise<ObjectiveGrant> {
  return db.transaction(async (tx) => {
    const objective = await requireObjective(tx, projectId, objectiveId, true);
    const { rows } = await tx.query<GrantRow>(
      `UPDATE objective_grants SET revoked_at = coalesce(revoked_at, now()) WHERE objective_id = $1 AND id = $2
       RETURNING *, coalesce(expires_at <= now(), false) AS expired`,
      [objective.id, grantId],
    );
    if (!rows[0]) throw new PalaiError('not-found', `Objective ${objective.id} has no grant ${JSON.stringify(grantId)}.`);
    return grantView(rows[0]);
  });
}

/** An active grant as the gate reads it. */
export interface ActiveGrant {
  type: string;
  locator: string;
  access_mode: string;
}

/** `a/b` against a pattern `x/y`, each part a name or `*`. */
function locatorMatches(locator: string, pattern: string): boolean {
  const slash = locator.indexOf('/');
  const [a, b] = slash < 0 ? [locator, ''] : [locator.slice(0, slash), locator.slice(slash + 1)];
  const [x, y] = pattern.split('/');
  return (x === '*' || x === a) && (y === '*' || (y === b && b !== ''));
}

/** A host (with its port when the URL named one) against `host`, `*.domain` or `host:port`. */
function hostMatches(host: string, pattern: string): boolean {
  if (host === '' || pattern === '') return false;
  const bare = host.replace(/:\d+$/, '');
  const patternHasPort = /:\d+$/.test(pattern) && !pattern.endsWith(']');
  const subject = patternHasPort ? host : bare;
  if (pattern.startsWith('*.')) return subject.endsWith(pattern.slice(1)) && subject.length > pattern.length - 1;
  return subject === pattern;
}

/** Whether a call's target is inside one of the grants, for a call of this class. An empty part (a node call naming no scope) only `*` covers. */
export function granted(target: GateTarget, observe: boolean, grants: readonly ActiveGrant[]): boolean {
  if (target.type === 'filesystem') return filesystemCoverage(target, observe, grants) !== null;
  return grants.some((grant) => {
    if (grant.type !== target.type) return false;
    if (grant.access_mode === 'read' && !observe) return false;
    return target.type === 'channel' ? hostMatches(target.locator, grant.locator) : locatorMatches(target.locator, grant.locator);
  });
}

/** A path the model gave, as names inside its profile; null for one that could lead out of it (the node refuses those too). */
function insideNames(path: string): string[] | null {
  if (path.includes('\u0000') || path.includes('\\') || path.startsWith('/') || /^[A-Za-z]:/.test(path)) return null;
  const names = path.split('/').filter((name) => name !== '' && name !== '.');
  return names.includes('..') ? null : names;
}

/**
 * Which active filesystem grants cover a node call's profile and every path it
 * names: `{confinedTo: null}` when one covers the whole profile, else the parts
 * (paths inside the profile) the covering grants name, to which the node then
 * confines the call, symlinks resolved; null when none covers it. A call whose
 * paths are not known (an exec command in a working scope) needs a grant on
 * the whole scope; a path that could lead out of the profile none covers.
 */
export function filesystemCoverage(target: GateTarget, observe: boolean, grants: readonly ActiveGrant[]): { confinedTo: string[] | null } | null {
  const paths = target.paths?.map(insideNames);
  if (paths?.some((p) => p === null)) return null;
  const parts = new Set<string>();
  let whole = false;
  for (const grant of grants) {
    if (grant.type !== 'filesystem' || (grant.access_mode === 'read' && !observe)) continue;
    const [node, profile, ...inside] = grant.locator.split('/');
    if (!locatorMatches(target.locator, `${node}/${profile}`)) continue;
    if (inside.length === 0) whole = true;
    else if (paths) {
      const under = (names: string[]) => inside.every((name, i) => names[i] === name);
      if ((paths as string[][]).some(under)) parts.add(inside.join('/'));
    }
  }
  if (whole) return { confinedTo: null };
  if (!paths || parts.size === 0) return null;
  // Every path inside one of the parts.
  const covered = (paths as string[][]).every((names) => [...parts].some((part) => part.split('/').every((name, i) => names[i] === name)));
  return covered ? { confinedTo: [...parts].sort() } : null;
}
