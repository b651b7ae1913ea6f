// Projects are the tenants of a hub: every row belongs to one, and every API key
// opens exactly one. A name is unique, so operators may use it wherever an id is
// accepted; ids start with `proj_`, which is why no name may.
import { newId } from '../ids.js';
import { PalaiError } from '../errors/palai-error.js';
import { isUniqueViolation, type Db, type Queryable } from '../store/db.js';
import { createApiKey, type CreatedApiKey } from './api-keys.js';

export interface Project {
  id: string;
  name: string;
  created_at: Date;
}

export interface ProjectSummary extends Project {
  active_keys: number;
}

/** What a project name may be, said the way error messages say it. */
export const PROJECT_NAME_RULE = '1–64 lowercase letters, digits, "-", "_" or ".", starting with a letter or digit, not starting with "proj_"';
const PROJECT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Why `name` cannot name a project, or null when it can. */
export function projectNameProblem(name: string): string | null {
  if (PROJECT_NAME.test(name) && !name.startsWith('proj_')) return null;
  return `Invalid project name ${JSON.stringify(name)}: use ${PROJECT_NAME_RULE}.`;
}

export async function listProjects(db: Db): Promise<Project[]> {
  return (await db.query<Project>('SELECT id, name, created_at FROM projects ORDER BY id')).rows;
}

/** Every project with its number of unrevoked keys, oldest first. */
export async function listProjectSummaries(db: Db): Promise<ProjectSummary[]> {
  const { rows } = await db.query<ProjectSummary>(
    `SELECT p.id, p.name, p.created_at, count(k.id)::integer AS active_keys
       FROM projects p LEFT JOIN api_keys k ON k.project_id = p.id AND k.revoked_at IS NULL
      GROUP BY p.id, p.name, p.created_at ORDER BY p.id`,
  );
  return rows;
}

/** The project with this id or, failing that, this name. */
export async function findProject(db: Db, ref: string): Promise<Project | null> {
  const { rows } = await db.query<Project>('SELECT id, name, created_at FROM projects WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1', [ref]);
  return rows[0] ?? null;
}

/** Refuses an invalid name (invalid-request) and a name already taken (conflict). */
export async function createProject(db: Queryable, name: string): Promise<Project> {
  const problem = projectNameProblem(name);
  if (problem) throw new PalaiError('invalid-request', problem);
  try {
    const { rows } = await db.query<Project>('INSERT INTO projects (id, name) VALUES ($1, $2) RETURNING id, name, created_at', [newId('proj'), name]);
    return rows[0];
  } catch (error) {
    if (isUniqueViolation(error)) throw new PalaiError('conflict', `A project named ${JSON.stringify(name)} already exists.`);
    throw error;
  }
}

/** A project and its first key, together or not at all: a project nobody can reach is of no use. */
export async function createProjectWithKey(db: Db, name: string, keyName = 'default'): Promise<{ project: Project; key: CreatedApiKey }> {
  return db.transaction(async (tx) => {
    const project = await createProject(tx, name);
    return { project, key: await createApiKey(tx, project.id, keyName) };
  });
}

/**
 * On first start with an empty store: one project and one key, created together.
 * Returns null when the store already has a project. The advisory lock keeps two
 * processes starting at once from bootstrapping twice.
 */
export async function bootstrapIfEmpty(db: Db, secret?: string | null): Promise<{ project: Project; key: CreatedApiKey } | null> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [7_311_002]);
    const existing = await tx.query('SELECT 1 FROM projects LIMIT 1');
    if (existing.rows.length > 0) return null;
    const project = await createProject(tx, 'default');
    const key = await createApiKey(tx, project.id, 'bootstrap', secret ?? undefined);
    return { project, key };
  });
}
