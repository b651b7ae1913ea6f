// What a file profile is and the two ways an operation on it can end badly.
// The hub sees these messages, so they name only what the model sent (its
// relative paths, cut) and the node's limits, never a root or an absolute path.

/** A file profile the node operator configured (palai-node.yaml `files:`). Roots are absolute paths as configured. */
export interface FileProfile {
  alias: string;
  revision: string | null;
  readableRoots: string[]; // absolute
  writableRoots: string[]; // absolute; writable implies readable
  allowCreate: boolean;
  allowOverwrite: boolean;
  maxFileBytes: number; // the largest file a write/patch may leave, and the largest file read whole
  /** Set by a plan confined to parts of the profile (paths inside it): only those parts may be read or written. */
  within?: readonly string[];
}

/** The operation was refused by the node's rules (outside the roots, not allowed to create/overwrite, too large...). Maps to COMMAND_DENIED. */
export class WorkspaceDenied extends Error {
  override readonly name = 'WorkspaceDenied';
}

/** The operation could not be done as asked (a patch that does not apply, a file that is not there, malformed patch). Maps to EXECUTION_FAILED. */
export class WorkspaceFailed extends Error {
  override readonly name = 'WorkspaceFailed';
}

const SHOWN_CHARS = 200;

/**
 * The model's own path as a message may show it: cut to 200 characters,
 * quoted, control characters escaped; one that could be absolute (a leading
 * `/`, a drive, a backslash) is never shown, whatever message it ends up in.
 */
export function shown(path: unknown): string {
  if (typeof path !== 'string') return '(not a string)';
  if (/^\/|^[A-Za-z]:|\\/.test(path)) return '(an absolute path)';
  let cut = path.length > SHOWN_CHARS ? path.slice(0, SHOWN_CHARS) : path;
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return JSON.stringify(cut) + (cut.length < path.length ? '…' : '');
}

/**
 * Any error as one the caller may pass on: ours as they are; a system error by
 * its code only (Node's own messages hold absolute paths).
 */
export function asWorkspaceError(error: unknown, what: string): WorkspaceDenied | WorkspaceFailed {
  if (error instanceof WorkspaceDenied || error instanceof WorkspaceFailed) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return new WorkspaceFailed(`${what} (${typeof code === 'string' ? code : 'unexpected error'})`);
}

/** Runs one operation so that whatever it throws is a WorkspaceDenied or a WorkspaceFailed without a path of the node. */
export async function guarded<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw asWorkspaceError(error, what);
  }
}
