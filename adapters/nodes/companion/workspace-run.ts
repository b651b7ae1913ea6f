// Runs an allowed workspace command in the companion itself (no process): the
// file operations of workspace/, their answer as the result's `data`. A refusal
// by the node's rules is COMMAND_DENIED, an operation that could not be done
// EXECUTION_FAILED; anything else says only its error code, never a path.
import type { NodeFailure } from '../../../generated/protocol-schemas.js';
import { MAX_FRAME_BYTES } from '../../../core/surfaces/nodes/wire/limits.js';
import { WORKSPACE_PATCH, WORKSPACE_READ, WORKSPACE_SEARCH } from './catalog.js';
import { EMPTY_RESULT, type ExecOutcome, type RunningProcess } from './exec.js';
import type { WorkspaceSpec } from './policy.js';
import { MAX_READ_BYTES } from './workspace-catalog.js';
import { WorkspaceDenied, WorkspaceFailed, workspacePatch, workspaceRead, workspaceSearch, workspaceWrite } from './workspace/index.js';

/** Room in a result frame for everything but the data. */
const FRAME_MARGIN_BYTES = 16 * 1024;

async function operate(spec: WorkspaceSpec): Promise<Record<string, unknown>> {
  const input = spec.input as never;
  switch (spec.command) {
    case WORKSPACE_READ: {
      const asked = spec.input as { path: string; offset?: number; length?: number };
      // Never more than the node's output limit; never a frame the protocol cannot carry.
      let length = Math.min(asked.length ?? MAX_READ_BYTES, MAX_READ_BYTES, spec.outputLimitBytes);
      for (;;) {
        const result = await workspaceRead(spec.profile, { ...asked, length });
        if (Buffer.byteLength(JSON.stringify(result), 'utf8') <= MAX_FRAME_BYTES - FRAME_MARGIN_BYTES || length <= 1) return { ...result };
        length = Math.floor(length / 2);
      }
    }
    case WORKSPACE_SEARCH:
      return { ...(await workspaceSearch(spec.profile, input)) };
    case WORKSPACE_PATCH:
      return { ...(await workspacePatch(spec.profile, input)) };
    default:
      return { ...(await workspaceWrite(spec.profile, input)) };
  }
}

function failureOf(error: unknown): NodeFailure {
  if (error instanceof WorkspaceDenied) return { code: 'COMMAND_DENIED', message: error.message };
  if (error instanceof WorkspaceFailed) return { code: 'EXECUTION_FAILED', message: error.message };
  const code = (error as NodeJS.ErrnoException)?.code;
  return { code: 'EXECUTION_FAILED', message: `the file operation failed${typeof code === 'string' ? ` (${code})` : ''}` };
}

/** A running workspace command, in the shape of a process; it ends on its own (a cancel waits for it). */
export function startWorkspace(spec: WorkspaceSpec): RunningProcess {
  const done: Promise<ExecOutcome> = operate(spec).then(
    (data) => ({ result: { ...EMPTY_RESULT, exit_code: 0, data }, canceled: false }),
    (error: unknown) => ({ result: EMPTY_RESULT, canceled: false, failure: failureOf(error) }),
  );
  return { pid: null, done, cancel: () => done.then(() => true) };
}
