// The admission command (protocols/admission.schema.json) at the kernel's
// boundary: every surface builds one, and it is checked here, once, by the
// generated validator, before admission reads or writes anything. A command
// that does not match is `validation-failed`, each offending field named by its
// pointer into the command (`/options/temperature`), which a surface may map
// back to its own request. The tool entries a surface adds for the run are
// checked by their providers here too, as an agent's are when it is created.
import type { ErrorObject } from 'ajv';
import type { AdmissionCommand } from '../../generated/protocol-schemas.js';
import { PalaiError, type FieldError } from '../errors/palai-error.js';
import { lazyOnce } from '../lazy.js';
import { schemaFieldError } from '../schemas/json-schema-drafts.js';
import { isSessionKeySource, sessionKeySources } from '../sessions/session-keys.js';
import { builtinTools } from '../tools/builtin/builtin-provider.js';
import type { ToolRegistry } from '../tools/tool-registry.js';

export type { AdmissionCommand };

/** What checks a tool entry without calling out: the kernel's tool registry, which asks the entry's provider. */
export type ToolEntryCheck = Pick<ToolRegistry, 'validateSpec'>;

/** Without the registry (a kernel module admitting in its own transaction that was given none): built-ins by name, as agent creation checks them. */
export const BUILTIN_ENTRY_CHECK: ToolEntryCheck = {
  validateSpec: (entry) => (entry.type === 'builtin' ? builtinTools.validateSpec({ type: 'builtin', name: entry.name ?? '' }) : null),
};

/** Loaded with the first admission, not at start-up. */
const validator = lazyOnce(async () => (await import('../../generated/protocol-validators.js')).AdmissionCommand);

const segment = (name: string): string => `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;

function fieldError(error: ErrorObject): FieldError {
  const params = error.params as Record<string, string>;
  if (error.keyword === 'required') return { pointer: error.instancePath + segment(params.missingProperty), detail: 'is required' };
  if (error.keyword === 'additionalProperties') return { pointer: error.instancePath + segment(params.additionalProperty), detail: 'is not a known field' };
  return { pointer: error.instancePath, detail: error.message ?? 'is invalid' };
}

/** Each error once; "must match a schema in oneOf" and "must match then" only repeat what the others say. */
function fieldErrors(errors: ErrorObject[]): FieldError[] {
  const telling = errors.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'if');
  const unique = new Map<string, FieldError>();
  for (const error of telling.length > 0 ? telling : errors) {
    const field = fieldError(error);
    unique.set(`${field.pointer} ${field.detail}`, field);
  }
  return [...unique.values()];
}

/** A session key of a source no wing declared: what no schema can say. */
function undeclaredSource(command: AdmissionCommand): FieldError[] {
  const session = command.session;
  if (session?.kind !== 'key' || isSessionKeySource(session.source)) return [];
  return [{ pointer: '/session/source', detail: `names no declared session-key source (declared: ${sessionKeySources().join(', ')})` }];
}

/** The caller's JSON Schemas (the text format's, each client function's parameters) that no draft's compiler takes. */
function unusableSchemas(command: AdmissionCommand): FieldError[] {
  const { text_format: format, tools = [] } = command.options ?? {};
  const errors = tools.map((tool, index) => (tool.parameters == null ? null : schemaFieldError(tool.parameters, `/options/tools/${index}/parameters`)));
  if (format?.type === 'json_schema') errors.unshift(schemaFieldError(format.schema, '/options/text_format/schema'));
  return errors.filter((error) => error !== null);
}

/** The run's own tool entries their provider refuses, or whose function parameters no draft's compiler takes. */
function unusableToolEntries(command: AdmissionCommand, tools: ToolEntryCheck): FieldError[] {
  return (command.options?.tool_entries ?? []).flatMap((entry, index): FieldError[] => {
    const pointer = `/options/tool_entries/${index}`;
    const problem = tools.validateSpec(entry);
    if (problem !== null) return [{ pointer, detail: `is not usable: ${problem}` }];
    const parameters = entry.type === 'function' && entry.parameters ? schemaFieldError(entry.parameters, `${pointer}/parameters`) : null;
    return parameters ? [parameters] : [];
  });
}

/**
 * Refuses a command that does not match its schema, names a session-key source
 * nobody declared, carries a JSON Schema no draft's compiler takes, or adds a
 * tool entry its provider refuses, naming the fields.
 */
export async function assertAdmissionCommand(command: unknown, tools: ToolEntryCheck): Promise<void> {
  const validate = await validator();
  const errors = validate(command)
    ? [
        ...undeclaredSource(command as AdmissionCommand),
        ...unusableSchemas(command as AdmissionCommand),
        ...unusableToolEntries(command as AdmissionCommand, tools),
      ]
    : fieldErrors(validate.errors ?? []);
  if (errors.length === 0) return;
  const first = errors[0] ?? { pointer: '', detail: 'is invalid' };
  throw new PalaiError('validation-failed', `The admission command's ${first.pointer || 'body'} ${first.detail}.`, { errors });
}
