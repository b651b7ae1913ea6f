// The catalog descriptors of the workspace commands. The model names a profile
// by its alias and paths relative to it; the descriptor names the aliases, the
// revisions and the limits, never a root. Which profiles' calls wait for a
// person's approval on the hub is the descriptor's `approval_profiles`.
import type { NodeCommandDescriptor, NodeRisk } from '../../../generated/schemas.js';
import type { CompanionConfig, CompanionFileProfile } from './config.js';

export const WORKSPACE_READ = 'workspace.read.v1';
export const WORKSPACE_SEARCH = 'workspace.search.v1';
export const WORKSPACE_WRITE = 'workspace.write.v1';
export const WORKSPACE_PATCH = 'workspace.patch.v1';
export const WORKSPACE_COMMANDS: readonly string[] = [WORKSPACE_READ, WORKSPACE_SEARCH, WORKSPACE_WRITE, WORKSPACE_PATCH];
/** The workspace commands that change files: they need a profile with a writable root. */
export const WRITING_COMMANDS: readonly string[] = [WORKSPACE_WRITE, WORKSPACE_PATCH];

export const MAX_READ_BYTES = 512 * 1024;
export const MAX_WRITE_BYTES = 256 * 1024;
export const MAX_PATCH_BYTES = 256 * 1024;

const DESCRIPTIONS: Record<string, string> = {
  [WORKSPACE_READ]: `Reads a file of a profile (at most ${MAX_READ_BYTES} bytes from offset); answers its text, or says it is binary.`,
  [WORKSPACE_SEARCH]: 'Finds lines holding a literal text (no regular expressions) in the files of a profile; at most 500 matches and 10,000 files.',
  [WORKSPACE_WRITE]: `Writes a whole file of a profile (at most ${MAX_WRITE_BYTES} bytes); create: true to make a new one.`,
  [WORKSPACE_PATCH]: `Applies a unified diff over paths relative to a profile (at most ${MAX_PATCH_BYTES} bytes, 32 files): to all its files or to none.`,
};

const path = (what: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 4096,
  description: `${what}, relative to the profile (no .. and no absolute path).`,
});

function inputProperties(command: string): Record<string, unknown> {
  switch (command) {
    case WORKSPACE_READ:
      return {
        path: path('The file'),
        offset: { type: 'integer', minimum: 0, description: 'The first byte to read (default 0).' },
        length: { type: 'integer', minimum: 1, maximum: MAX_READ_BYTES, description: `How many bytes (default and at most ${MAX_READ_BYTES}).` },
      };
    case WORKSPACE_SEARCH:
      return {
        pattern: { type: 'string', minLength: 1, maxLength: 1024, description: 'The text to find, literally (case-sensitive).' },
        path: path('The directory or file to search (default the whole profile)'),
        glob: { type: 'string', minLength: 1, maxLength: 512, description: 'Only files whose relative path matches this glob (`**/*.ts`).' },
        limit: { type: 'integer', minimum: 1, maximum: 500, description: 'At most this many matches (default 100).' },
      };
    case WORKSPACE_WRITE:
      return {
        path: path('The file'),
        content: { type: 'string', maxLength: MAX_WRITE_BYTES, description: 'The whole new content (UTF-8).' },
        create: { type: 'boolean', description: 'true to create the file when it does not exist.' },
      };
    default:
      return { patch: { type: 'string', minLength: 1, maxLength: MAX_PATCH_BYTES, description: 'A unified diff (`--- a/x`, `+++ b/x`, `@@` hunks).' } };
  }
}

const REQUIRED: Record<string, string[]> = {
  [WORKSPACE_READ]: ['profile', 'path'],
  [WORKSPACE_SEARCH]: ['profile', 'pattern'],
  [WORKSPACE_WRITE]: ['profile', 'path', 'content'],
  [WORKSPACE_PATCH]: ['profile', 'patch'],
};

/** Whether a profile's calls of the command wait for approval: reads by its `read` rule, writes by `write`. */
export function needsApproval(command: string, profile: CompanionFileProfile): boolean {
  return command === WORKSPACE_WRITE || command === WORKSPACE_PATCH ? profile.approval.write : profile.approval.read;
}

const shown = (p: CompanionFileProfile) => {
  const mode = p.writableRoots.length > 0 ? 'read-write' : 'read-only';
  const rules = [p.allowCreate ? 'may create' : 'no new files', p.allowOverwrite ? 'may overwrite' : 'no overwrites'].join(', ');
  return `${p.alias}${p.revision ? ` (${p.revision})` : ''}: ${mode}, ${rules}, files up to ${p.maxFileBytes} bytes`;
};

export function workspaceDescriptor(name: string, risk: NodeRisk, profiles: CompanionFileProfile[], config: CompanionConfig): NodeCommandDescriptor {
  const approval = profiles.filter((p) => needsApproval(name, p)).map((p) => p.alias);
  return {
    name,
    risk,
    description: `${DESCRIPTIONS[name]} Profiles: ${profiles.map(shown).join('; ')}.`.slice(0, 4000),
    input_schema: {
      type: 'object',
      additionalProperties: false,
      required: REQUIRED[name],
      properties: { profile: { type: 'string', enum: profiles.map((p) => p.alias), description: 'The file profile, by its alias.' }, ...inputProperties(name) },
    },
    max_timeout_seconds: config.policy.maxTimeoutSeconds,
    max_output_bytes: config.policy.maxOutputBytes,
    ...(approval.length > 0 ? { approval_profiles: approval } : {}),
  };
}
