// Files the companion keeps in its home (state, ledger records) are replaced,
// never rewritten in place: a crash leaves either the old or the new content,
// never half of one. The directory is synced too, so the rename itself survives
// a power loss.
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Writes `content` to a temporary file beside `path`, syncs it, renames it over `path`, syncs the directory. */
export function writeFileAtomic(path: string, content: string, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', mode);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  syncDirectory(dirname(path));
}

function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems cannot sync a directory; the rename is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
