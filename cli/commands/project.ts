// Which project a command acts on: the one named by --project (id or name), else
// the only one. With several projects and no --project the command refuses:
// on a multi-tenant hub, silently picking one tenant is never what was meant.
import { findProject, listProjects, type Project } from '../../core/auth/projects.js';
import type { Db } from '../../core/store/db.js';
import { CliError } from './errors.js';

/** How many projects an error line names before it points to `palai projects list`. */
const NAMED_IN_ERRORS = 10;

/**
 * The named project, or the only one. In a store without any project, a caller
 * that may create the first one (`creatable`) gets null instead of an error,
 * unless a project id was asked for.
 */
export async function projectFor(db: Db, ref: string | undefined): Promise<Project>;
export async function projectFor(db: Db, ref: string | undefined, creatable: true): Promise<Project | null>;
export async function projectFor(db: Db, ref: string | undefined, creatable = false): Promise<Project | null> {
  const found = ref ? await findProject(db, ref) : null;
  if (found) return found;
  const all = await listProjects(db);
  if (all.length === 0) {
    if (creatable && !ref?.startsWith('proj_')) return null;
    const hint = 'create one with palai projects create NAME';
    throw new CliError(ref ? `No project ${JSON.stringify(ref)}; the store has none yet: ${hint}.` : `The store has no project yet; ${hint}.`);
  }
  if (ref) throw new CliError(`No project ${JSON.stringify(ref)}; projects: ${describeProjects(all)}.`);
  if (all.length === 1) return all[0];
  throw new CliError(`The store has ${all.length} projects; choose one with --project NAME|ID: ${describeProjects(all)}.`);
}

/** "proj_… (name), …", cut short on a large hub. */
export function describeProjects(projects: Project[]): string {
  const named = projects.slice(0, NAMED_IN_ERRORS).map((p) => `${p.id} (${p.name})`);
  const more = projects.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more (palai projects list)` : named.join(', ');
}
