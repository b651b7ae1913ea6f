import { newId } from '../ids.js';
import type { Db, Queryable } from '../store/db.js';
import { createApiKey, type CreatedApiKey } from './api-keys.js';

export interface Project {
  id: string;
  name: string;
  created_at: Date;
}

export async function listProjects(db: Db): Promise<Project[]> {
  return (await db.query<Project>('SELECT id, name, created_at FROM projects ORDER BY id')).rows;
}

export async function createProject(db: Queryable, name: string): Promise<Project> {
  const { rows } = await db.query<Project>('INSERT INTO projects (id, name) VALUES ($1, $2) RETURNING id, name, created_at', [
    newId('proj'),
    name,
  ]);
  return rows[0];
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

/** The project CLI commands act on: the one named, or the only/oldest one. */
export async function resolveProject(db: Db, projectId?: string): Promise<Project | null> {
  const projects = await listProjects(db);
  if (projectId) return projects.find((p) => p.id === projectId || p.name === projectId) ?? null;
  return projects[0] ?? null;
}
