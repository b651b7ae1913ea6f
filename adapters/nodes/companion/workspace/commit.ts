// Writing a patch's files all or none. Every new content is first written and
// synced to a temporary file beside its target; only then are they renamed
// over (or the targets unlinked, for deletions). If a rename fails, the files
// already changed get their original content back (kept in memory) before the
// failure is reported. A crash in the middle can still leave some files
// changed: the renames are atomic one by one, not together.
import { rename, rm, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { replaceFile, syncDirectory, writeTemporary } from './files.js';
import { asWorkspaceError } from './profile.js';

export interface Change {
  /** The real path of the target, checked to be inside a writable root. */
  real: string;
  /** The model's path, as a message may show it. */
  shown: string;
  /** The content before, or null when the file is created. */
  original: Buffer | null;
  /** The content after, or null when the file is deleted. */
  next: Buffer | null;
  /** The mode to keep, for a file that was there. */
  mode?: number;
}

export async function commitChanges(changes: Change[]): Promise<void> {
  const temporaries: (string | null)[] = [];
  try {
    for (const change of changes) temporaries.push(change.next === null ? null : await writeTemporary(change.real, change.next, change.mode));
  } catch (error) {
    await removeAll(temporaries);
    throw asWorkspaceError(error, `could not write ${changes[temporaries.length].shown}; no file was changed`);
  }

  const done: Change[] = [];
  for (const [i, change] of changes.entries()) {
    try {
      if (change.next === null) await unlink(change.real);
      else await rename(temporaries[i]!, change.real);
      temporaries[i] = null;
      done.push(change);
    } catch (error) {
      await removeAll(temporaries);
      const unrestored = await restore(done);
      const after = unrestored.length === 0 ? 'the files changed before it were restored' : `could not restore ${unrestored.join(', ')}`.slice(0, 1000);
      throw asWorkspaceError(error, `could not write ${change.shown}; ${after}`);
    }
  }
  for (const dir of new Set(changes.map((change) => dirname(change.real)))) await syncDirectory(dir);
}

/** Puts back what the changes replaced, last first; returns the files it could not restore. */
async function restore(done: Change[]): Promise<string[]> {
  const failed: string[] = [];
  for (const change of [...done].reverse()) {
    try {
      if (change.original === null) await rm(change.real, { force: true });
      else await replaceFile(change.real, change.original, change.mode);
    } catch {
      failed.push(change.shown);
    }
  }
  return failed;
}

async function removeAll(temporaries: (string | null)[]): Promise<void> {
  for (const temporary of temporaries) if (temporary !== null) await rm(temporary, { force: true }).catch(() => {});
}
