// Agents are named, versioned specs. Every change writes a new immutable
// revision; responses pin the revision they were admitted with.
import type { Agent, AgentRevision, AgentSpecFields, CreateAgentRequest, UpdateAgentRequest } from '../../generated/schemas.js';
import { canonicalJson, unixSeconds } from '../json.js';
import { newId } from '../ids.js';
import { checkRecalledKey, liveKeySql, type RecalledKey } from '../auth/recalled-keys.js';
import { notFound, PalaiError } from '../errors/palai-error.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../pagination.js';
import { resourceLookup } from '../resources/find-by-ref.js';
import { isUniqueViolation, type Db, type Queryable } from '../store/db.js';
import { checkAgentSpec } from './agent-spec.js';
import { recordAnswer, reserveKey, type IdempotencyClaim } from '../idempotency/idempotency.js';
import type { ConnectionRow } from '../models/connections.js';
import { modelConnection, modelProblem, type ModelAccess } from '../models/resolve.js';

export interface AgentRow {
  id: string;
  project_id: string;
  name: string;
  current_revision: number;
  revision_id: string;
  spec: AgentSpecFields;
  created_at: Date;
  updated_at: Date;
}

export interface RevisionRow {
  id: string;
  agent_id: string;
  revision: number;
  spec: AgentSpecFields;
  created_at: Date;
}

const AGENT_COLUMNS = 'a.id, a.project_id, a.name, a.current_revision, a.created_at, a.updated_at, r.id AS revision_id, r.spec';
const AGENT_TABLES = 'agents a JOIN agent_revisions r ON r.agent_id = a.id AND r.revision = a.current_revision';
const SELECT_AGENT = `SELECT ${AGENT_COLUMNS} FROM ${AGENT_TABLES}`;
const AGENT_ID_PREFIX = 'agt_';
const agentNotFound = (ref: string) => new PalaiError('agent-not-found', `No agent with id or name ${JSON.stringify(ref)} in this project.`);

export function agentView(row: AgentRow): Agent {
  return {
    ...row.spec,
    id: row.id,
    object: 'agent',
    name: row.name,
    revision: row.current_revision,
    revision_id: row.revision_id,
    model: row.spec.model!,
    tools: row.spec.tools ?? [],
    metadata: row.spec.metadata ?? {},
    created_at: unixSeconds(row.created_at)!,
    updated_at: unixSeconds(row.updated_at)!,
  };
}

function revisionView(row: RevisionRow): AgentRevision {
  return { id: row.id, object: 'agent.revision', agent_id: row.agent_id, revision: row.revision, spec: row.spec, created_at: unixSeconds(row.created_at)! };
}

function specOf(request: CreateAgentRequest | UpdateAgentRequest): AgentSpecFields {
  const { name: _name, ...spec } = request;
  checkAgentSpec(spec);
  return spec;
}

/**
 * The answer to a create or update: the agent, with what would stop a run of
 * this revision from this process (its model's key, say) as warnings. A model
 * connection that does not exist, or is of another provider, refuses the
 * write instead. Without `access` (a caller with no secret store) no warning is looked for.
 */
async function writtenAgent(tx: Queryable, projectId: string, agentId: string, access: ModelAccess | undefined): Promise<Agent> {
  const agent = agentView((await findAgent(tx, projectId, agentId))!);
  const problem = access ? await modelProblem(tx, access, projectId, agent.model) : null;
  return problem === null ? agent : { ...agent, warnings: [{ pointer: '/model', detail: problem }] };
}

/** The agent named by id (`agt_…`) or name: `findAgent` answers null, `requireAgent` agent-not-found. */
export const { find: findAgent, require: requireAgent } = resourceLookup<AgentRow>(
  { table: 'a', idPrefix: AGENT_ID_PREFIX, select: SELECT_AGENT },
  agentNotFound,
);

/**
 * An agent as a run is admitted with it: with the model connection its spec
 * names, read by the same statement (null when it names none, or one that does
 * not exist), so the run's first model step needs no read of its own.
 */
export interface AgentForRun extends AgentRow {
  connection: ConnectionRow | null;
}

/** The connection's columns, each read as connection_<column> beside the agent's. */
const CONNECTION_COLUMNS = [
  'id',
  'project_id',
  'name',
  'provider',
  'base_url',
  'api_key_secret_id',
  'api_key_last4',
  'api_key_env',
  'default_model',
  'created_at',
] as const;
type ConnectionColumns = { [K in (typeof CONNECTION_COLUMNS)[number] as `connection_${K}`]: ConnectionRow[K] | null };

// The spec's ref is an id when it has the id prefix, else a name (as find-by-ref.ts reads a ref); the OR lets each side use its index.
const SPEC_CONNECTION = "r.spec->'model'->>'connection'";
const SELECT_AGENT_FOR_RUN = `SELECT ${AGENT_COLUMNS}, ${CONNECTION_COLUMNS.map((column) => `c.${column} AS connection_${column}`).join(', ')}
  FROM ${AGENT_TABLES} LEFT JOIN model_connections c ON c.project_id = a.project_id AND (
    (starts_with(${SPEC_CONNECTION}, 'mconn_') AND c.id = ${SPEC_CONNECTION}) OR (NOT starts_with(${SPEC_CONNECTION}, 'mconn_') AND c.name = ${SPEC_CONNECTION}))`;

const agentForRunLookup = resourceLookup<AgentRow & ConnectionColumns>({ table: 'a', idPrefix: AGENT_ID_PREFIX, select: SELECT_AGENT_FOR_RUN }, agentNotFound);

/**
 * The agent named by id or name with its model connection (AgentForRun), or
 * agent-not-found. With a recalled key, the same statement checks it: unauthorized
 * (before agent-not-found) unless it is live in the project.
 */
export async function requireAgentForRun(db: Queryable, projectId: string, ref: string, key?: RecalledKey): Promise<AgentForRun> {
  const row = key && !key.checked ? await agentForRunCheckingKey(db, projectId, ref, key) : await agentForRunLookup.require(db, projectId, ref);
  const { id, project_id, name, current_revision, revision_id, spec, created_at, updated_at } = row;
  const agent: AgentRow = { id, project_id, name, current_revision, revision_id, spec, created_at, updated_at };
  if (row.connection_id === null) return { ...agent, connection: null };
  const connection = Object.fromEntries(CONNECTION_COLUMNS.map((column) => [column, row[`connection_${column}`]]));
  return { ...agent, connection: connection as unknown as ConnectionRow };
}

async function agentForRunCheckingKey(db: Queryable, projectId: string, ref: string, key: RecalledKey): Promise<AgentRow & ConnectionColumns> {
  const column = ref.startsWith(AGENT_ID_PREFIX) ? 'id' : 'name';
  const { rows } = await db.query<AgentRow & ConnectionColumns & { live_key_id: string | null }>(
    `${SELECT_AGENT_FOR_RUN.replace('SELECT ', `SELECT ${liveKeySql('$3', '$1')} AS live_key_id, `)} WHERE a.project_id = $1 AND a.${column} = $2`,
    [projectId, ref, key.hashToCheck()],
  );
  if (rows.length === 0) {
    // No agent, so no row to carry the key's check: it is made alone, and only a live key hears agent-not-found.
    await checkRecalledKey(db, key);
    throw agentNotFound(ref);
  }
  const { live_key_id, ...row } = rows[0];
  key.settle(live_key_id);
  return row;
}

/** The project an agent id belongs to, across projects (null: no such agent). */
export async function projectOfAgent(db: Queryable, agentId: string): Promise<string | null> {
  const { rows } = await db.query<{ project_id: string }>('SELECT project_id FROM agents WHERE id = $1', [agentId]);
  return rows[0]?.project_id ?? null;
}

export async function createAgent(db: Db, projectId: string, request: CreateAgentRequest, idem?: IdempotencyClaim, access?: ModelAccess): Promise<Agent> {
  const spec = specOf(request);
  const taken = () => new PalaiError('conflict', `An agent named ${JSON.stringify(request.name)} already exists; update it instead.`);
  try {
    return await db.transaction(async (tx) => {
      const agentId = newId('agt');
      await reserveKey(tx, projectId, idem, agentId);
      if (await findAgent(tx, projectId, request.name)) throw taken();
      await modelConnection(tx, projectId, spec.model!);
      await tx.query('INSERT INTO agents (id, project_id, name, current_revision) VALUES ($1, $2, $3, 1)', [agentId, projectId, request.name]);
      await insertRevision(tx, projectId, agentId, 1, spec);
      const agent = await writtenAgent(tx, projectId, agentId, access);
      await recordAnswer(tx, projectId, idem, 201, agent, agentId);
      return agent;
    });
  } catch (error) {
    // A concurrent create of the same name got past the check and committed first.
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
}

/** Replaces the spec; an identical spec leaves the agent at its current revision. */
export async function updateAgent(
  db: Db,
  projectId: string,
  ref: string,
  request: UpdateAgentRequest,
  idem?: IdempotencyClaim,
  access?: ModelAccess,
): Promise<{ agent: Agent; changed: boolean }> {
  const spec = specOf(request);
  return db.transaction(async (tx) => {
    await reserveKey(tx, projectId, idem);
    const current = await requireAgent(tx, projectId, ref, true);
    if (request.name !== undefined && request.name !== current.name) {
      throw new PalaiError('invalid-request', 'An agent cannot be renamed.', {
        errors: [{ pointer: '/name', detail: `must be ${JSON.stringify(current.name)}` }],
      });
    }
    await modelConnection(tx, projectId, spec.model!);
    const changed = canonicalJson(spec) !== canonicalJson(current.spec);
    if (changed) {
      const revision = current.current_revision + 1;
      await insertRevision(tx, projectId, current.id, revision, spec);
      await tx.query('UPDATE agents SET current_revision = $2, updated_at = now() WHERE id = $1', [current.id, revision]);
    }
    const agent = await writtenAgent(tx, projectId, current.id, access);
    await recordAnswer(tx, projectId, idem, 200, agent, agent.id);
    return { agent, changed };
  });
}

/** Declarative create-or-update by name (`palai agents apply`). */
export async function applyAgent(
  db: Db,
  projectId: string,
  request: CreateAgentRequest,
  access?: ModelAccess,
): Promise<{ agent: Agent; action: 'created' | 'updated' | 'unchanged' }> {
  if (!(await findAgent(db, projectId, request.name))) {
    try {
      return { agent: await createAgent(db, projectId, request, undefined, access), action: 'created' };
    } catch (error) {
      // Created concurrently by someone else: fall through to an update.
      if (!(error instanceof PalaiError && error.slug === 'conflict')) throw error;
    }
  }
  const { agent, changed } = await updateAgent(db, projectId, request.name, request, undefined, access);
  return { agent, action: changed ? 'updated' : 'unchanged' };
}

async function insertRevision(tx: Queryable, projectId: string, agentId: string, revision: number, spec: AgentSpecFields): Promise<void> {
  await tx.query('INSERT INTO agent_revisions (id, project_id, agent_id, revision, spec) VALUES ($1, $2, $3, $4, $5)', [
    newId('agtrev'),
    projectId,
    agentId,
    revision,
    JSON.stringify(spec),
  ]);
}

export async function listAgents(db: Db, projectId: string, page: PageRequest): Promise<Page<Agent>> {
  const { rows } = await db.query<AgentRow>(`${SELECT_AGENT} WHERE a.project_id = $1 AND ($2::text IS NULL OR a.id > $2) ORDER BY a.id LIMIT $3`, [
    projectId,
    page.after ?? null,
    fetchSize(page),
  ]);
  return toPage(rows, page, agentView);
}

/** Every agent of every project at its current revision, by project and name: for the operator's checks. */
export async function listEveryAgent(db: Queryable): Promise<AgentRow[]> {
  const { rows } = await db.query<AgentRow>(`${SELECT_AGENT} ORDER BY a.project_id, a.name`);
  return rows;
}

export async function listRevisions(db: Db, projectId: string, ref: string, page: PageRequest): Promise<Page<AgentRevision>> {
  const agent = await requireAgent(db, projectId, ref);
  const { rows } = await db.query<RevisionRow>(
    `SELECT id, agent_id, revision, spec, created_at FROM agent_revisions
     WHERE agent_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3`,
    [agent.id, page.after ?? null, fetchSize(page)],
  );
  return toPage(rows, page, revisionView);
}

/** One revision of the project's agents by its id: what a response ran (its output schema, say), without paging. */
export async function requireRevision(db: Queryable, projectId: string, revisionId: string): Promise<AgentRevision> {
  const { rows } = await db.query<RevisionRow>('SELECT id, agent_id, revision, spec, created_at FROM agent_revisions WHERE project_id = $1 AND id = $2', [
    projectId,
    revisionId,
  ]);
  if (!rows[0]) throw notFound('agent revision', revisionId);
  return revisionView(rows[0]);
}
