// workspace.patch: a unified diff over up to 32 files, all or nothing. Every
// path is checked first, then every file's new content is computed in memory;
// a hunk that does not apply fails the whole patch with nothing written.
// Only then are the files written (commit.ts).
import { type Change, commitChanges } from './commit.js';
import { applySection, parsePatch, type FileSection } from './diff.js';
import { openRegular, readAt } from './files.js';
import { checkRelative, resolveTarget, type Target } from './paths.js';
import { type FileProfile, guarded, WorkspaceDenied, WorkspaceFailed } from './profile.js';

export const MAX_PATCH_BYTES = 262_144;
export const MAX_PATCH_FILES = 32;
export const MAX_PATCH_RESULT_BYTES = 1_048_576;

export interface PatchedFile {
  path: string;
  created: boolean;
  deleted: boolean;
  hunks: number;
}

export interface PatchResult {
  files: PatchedFile[];
}

export async function workspacePatch(profile: FileProfile, input: { patch: string }): Promise<PatchResult> {
  return guarded('could not apply the patch', async () => {
    if (typeof input.patch !== 'string') throw new WorkspaceFailed('the patch must be a string');
    const bytes = Buffer.byteLength(input.patch, 'utf8');
    if (bytes > MAX_PATCH_BYTES) throw new WorkspaceDenied(`the patch is ${bytes} bytes, over the node's limit of ${MAX_PATCH_BYTES}`);
    const sections = parsePatch(Buffer.from(input.patch, 'utf8').toString('latin1'));
    if (sections.length > MAX_PATCH_FILES) throw new WorkspaceDenied(`the patch changes ${sections.length} files, over the node's limit of ${MAX_PATCH_FILES}`);

    // Every path and permission before any content is read: a refused path refuses the whole patch.
    const planned: { section: FileSection; target: Target }[] = [];
    for (const section of sections) {
      const target = await resolveTarget(profile, sectionPath(section), 'write');
      if (planned.some((p) => p.target.real === target.real)) throw new WorkspaceFailed(`the patch has two sections for ${target.shown}`);
      allowed(profile, section, target);
      planned.push({ section, target });
    }

    const changes: Change[] = [];
    let total = 0;
    for (const { section, target } of planned) {
      const before = target.exists ? await readOriginal(profile, target) : null;
      const after = applySection(before?.content.toString('latin1') ?? '', section, target.shown);
      const deleted = section.newPath === null;
      if (deleted && after !== '') throw new WorkspaceFailed(`the patch deletes ${target.shown} but its hunks do not remove all of it`);
      if (after.length > profile.maxFileBytes)
        throw new WorkspaceDenied(`${target.shown} would be ${after.length} bytes, over the node's limit of ${profile.maxFileBytes}`);
      total += deleted ? 0 : after.length;
      if (total > MAX_PATCH_RESULT_BYTES) throw new WorkspaceDenied(`the patched files would be over ${MAX_PATCH_RESULT_BYTES} bytes together`);
      changes.push({
        real: target.real,
        shown: target.shown,
        original: before?.content ?? null,
        next: deleted ? null : Buffer.from(after, 'latin1'),
        mode: before?.mode,
      });
    }

    await commitChanges(changes);
    return {
      files: planned.map(({ section, target }) => ({
        path: target.relative,
        created: section.oldPath === null,
        deleted: section.newPath === null,
        hunks: section.hunks.length,
      })),
    };
  });
}

/** The one file a section is about: a rename (two different paths) is not something this applies. */
function sectionPath(section: FileSection): string {
  const { oldPath, newPath } = section;
  if (oldPath === null && newPath === null) throw new WorkspaceFailed('the patch has a section from /dev/null to /dev/null');
  const same = oldPath === null || newPath === null || checkRelative(oldPath).join('/') === checkRelative(newPath).join('/');
  if (!same) throw new WorkspaceFailed('renames are not supported (a section names two different files)');
  return (newPath ?? oldPath)!;
}

/** Creating needs the profile's allowCreate and no file there; changing or deleting needs allowOverwrite and the file. */
function allowed(profile: FileProfile, section: FileSection, target: Target): void {
  if (section.oldPath === null) {
    if (!profile.allowCreate) throw new WorkspaceDenied(`the profile does not allow creating files (${target.shown})`);
    if (target.exists) throw new WorkspaceFailed(`the patch creates ${target.shown}, which already exists`);
    return;
  }
  if (!profile.allowOverwrite) throw new WorkspaceDenied(`the profile does not allow changing or deleting files (${target.shown})`);
  if (!target.exists) throw new WorkspaceFailed(`${target.shown} does not exist`);
}

/** The file as it is now, bounded: a file the patch could not bring under the limit is not read whole. */
async function readOriginal(profile: FileProfile, target: Target): Promise<{ content: Buffer; mode: number }> {
  const limit = profile.maxFileBytes + MAX_PATCH_BYTES;
  const { handle, size, mode } = await openRegular(target.real, target.shown);
  try {
    if (size > limit) throw new WorkspaceDenied(`${target.shown} is ${size} bytes, too large to patch under the node's limit of ${profile.maxFileBytes}`);
    const content = await readAt(handle, 0, size);
    return { content, mode };
  } finally {
    await handle.close();
  }
}
