// Which project a command acts on: the one named by --project (id or name), else
// the oldest; with a hint when there is none.
import { listProjects, resolveProject, type Project } from '../../core/auth/projects.js';
import type { Db } from '../../core/store/db.js';
import { CliError } from './errors.js';

/**
 * The named project, or the oldest one. In a store without any project, a caller
 * that may create the first one (`creatable`) gets null instead of an error,
 * unless a project id was asked for.
 */
export async function projectFor(db: Db, ref: string | undefined): Promise<Project>;
export async function projectFor(db: Db, ref: string | undefined, creatable: true): Promise<Project | null>;
export async function projectFor(db: Db, ref: string | undefined, creatable = false): Promise<Project | null> {
  const project = await resolveProject(db, ref);
  if (project) return project;
  const all = await listProjects(db);
  if (all.length === 0 && creatable && !ref?.startsWith('proj_')) return null;
  if (all.length === 0) throw new CliError('The store has no project yet; run palai keys create, or start palai serve once.');
  throw new CliError(`No project ${JSON.stringify(ref)}; projects: ${all.map((p) => `${p.id} (${p.name})`).join(', ')}.`);
}
