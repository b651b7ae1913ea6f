// What the operations share at the file level: telling text from binary, an
// open that takes only a regular file, a read that never goes past its buffer,
// and a replace that leaves either the old content or the new, never half.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { WorkspaceFailed } from './profile.js';

/** How much of a file's start decides whether it is binary. */
export const SAMPLE_BYTES = 8192;

/** A NUL or bytes that are not UTF-8 in the sample; a character cut at the sample's end counts only if the file ends there. */
export function looksBinary(sample: Buffer, fileEnds: boolean): boolean {
  const head = sample.subarray(0, SAMPLE_BYTES);
  if (head.includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !fileEnds || sample.length > SAMPLE_BYTES });
    return false;
  } catch {
    return true;
  }
}

/** UTF-8 text as the hub can store it: NUL, which its store cannot hold, becomes U+FFFD (as exec.ts does). */
export const decodeText = (bytes: Buffer): string => bytes.toString('utf8').replaceAll('\u0000', '\uFFFD');

/**
 * Opens a real path for reading only if it is a regular file: O_NOFOLLOW so a
 * symlink put there since the check is not followed, O_NONBLOCK so a FIFO
 * cannot hang the open (it is then refused by the fstat).
 */
export async function openRegular(real: string, label: string): Promise<{ handle: FileHandle; size: number; mode: number }> {
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new WorkspaceFailed(`${label} is not a regular file`);
    return { handle, size: stats.size, mode: stats.mode & 0o7777 };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** At most `length` bytes from `position`: the buffer is the bound, so a file that grows meanwhile cannot make it read more. */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, length));
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** A new temporary file beside `real` (same directory, so the rename is atomic), holding `content`, synced. Removed again on any failure. */
export async function writeTemporary(real: string, content: Buffer, mode?: number): Promise<string> {
  const temporary = join(dirname(real), `.palai-${randomBytes(8).toString('hex')}.tmp`);
  let handle: FileHandle | undefined;
  try {
    // 'wx': never an existing file and never through a symlink.
    handle = await open(temporary, 'wx', 0o666);
    // An overwritten file keeps its mode; open's mode would go through the umask.
    if (mode !== undefined) await handle.chmod(mode);
    await handle.writeFile(content);
    await handle.sync();
    await handle.close();
    handle = undefined;
    return temporary;
  } catch (error) {
    await handle?.close().catch(() => {});
    if (handle !== undefined || (error as NodeJS.ErrnoException).code !== 'EEXIST') await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}

/** Replaces `real` with `content` by a synced temporary file renamed over it; no temporary file is left on failure. */
export async function replaceFile(real: string, content: Buffer, mode?: number): Promise<void> {
  const temporary = await writeTemporary(real, content, mode);
  try {
    await rename(temporary, real);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
  await syncDirectory(dirname(real));
}

/** Syncs a directory so a rename or unlink in it survives a power loss; some file systems cannot, and the rename is atomic anyway. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Not every file system can sync a directory.
  } finally {
    await handle?.close().catch(() => {});
  }
}
