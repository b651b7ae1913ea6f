// workspace.write: one whole file, replaced atomically (a synced temporary
// file renamed over it). Creating needs both the profile's leave and the
// model's explicit create: true; overwriting needs the profile's leave. No
// directory is made.
import { stat } from 'node:fs/promises';
import { replaceFile } from './files.js';
import { resolveTarget } from './paths.js';
import { type FileProfile, guarded, shown, WorkspaceDenied, WorkspaceFailed } from './profile.js';

export const MAX_WRITE_BYTES = 262_144;

export interface WriteResult {
  path: string;
  bytes: number;
  created: boolean;
}

export async function workspaceWrite(profile: FileProfile, input: { path: string; content: string; create?: boolean }): Promise<WriteResult> {
  return guarded(`could not write ${shown(input.path)}`, async () => {
    const target = await resolveTarget(profile, input.path, 'write');
    if (typeof input.content !== 'string') throw new WorkspaceFailed('the content must be a string');
    const content = Buffer.from(input.content, 'utf8');
    const limit = Math.min(MAX_WRITE_BYTES, profile.maxFileBytes);
    if (content.length > limit) throw new WorkspaceDenied(`the content is ${content.length} bytes, over the node's limit of ${limit}`);

    let mode: number | undefined;
    if (target.exists) {
      const stats = await stat(target.real);
      if (!stats.isFile()) throw new WorkspaceFailed(`${target.shown} is not a regular file`);
      if (!profile.allowOverwrite) throw new WorkspaceDenied(`the profile does not allow overwriting files, and ${target.shown} exists`);
      mode = stats.mode & 0o7777;
    } else {
      if (!profile.allowCreate) throw new WorkspaceDenied(`the profile does not allow creating files, and ${target.shown} does not exist`);
      if (input.create !== true) throw new WorkspaceFailed(`${target.shown} does not exist; pass create: true to create it`);
    }
    await replaceFile(target.real, content, mode);
    return { path: target.relative, bytes: content.length, created: !target.exists };
  });
}
