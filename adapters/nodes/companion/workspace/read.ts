// workspace.read: a window of one file, at most 512 KiB (and never more than
// the profile's largest file), as UTF-8 text or flagged binary.
import { decodeText, looksBinary, openRegular, readAt, SAMPLE_BYTES } from './files.js';
import { resolveTarget } from './paths.js';
import { type FileProfile, guarded, shown, WorkspaceFailed } from './profile.js';

export const MAX_READ_BYTES = 524_288;

export interface ReadResult {
  path: string;
  size: number;
  offset: number;
  length: number;
  binary: boolean;
  content: string | null;
  truncated: boolean;
}

export async function workspaceRead(profile: FileProfile, input: { path: string; offset?: number; length?: number }): Promise<ReadResult> {
  return guarded(`could not read ${shown(input.path)}`, async () => {
    const limit = Math.min(MAX_READ_BYTES, profile.maxFileBytes);
    const offset = count(input.offset, 'offset') ?? 0;
    const length = Math.min(count(input.length, 'length') ?? limit, limit);
    const target = await resolveTarget(profile, input.path, 'read');
    if (!target.exists) throw new WorkspaceFailed(`${target.shown} does not exist`);

    const { handle, size } = await openRegular(target.real, target.shown);
    try {
      // Sized from the fstat: bytes appended while reading are not read, however many there are.
      const window = await readAt(handle, offset, Math.min(length, Math.max(0, size - offset)));
      const head = offset === 0 && window.length >= Math.min(size, SAMPLE_BYTES) ? window : await readAt(handle, 0, SAMPLE_BYTES);
      const now = (await handle.stat()).size;
      const binary = looksBinary(head, head.length >= now);
      return {
        path: target.relative,
        size: now,
        offset,
        length: window.length,
        binary,
        content: binary ? null : decodeText(window),
        truncated: offset + window.length < now,
      };
    } finally {
      await handle.close();
    }
  });
}

/** A byte count the model sent: absent, or a whole number from 0. */
function count(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new WorkspaceFailed(`the ${name} must be a whole number from 0`);
  return value;
}
