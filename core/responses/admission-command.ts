// The admission command (protocols/admission.schema.json) at the kernel's
// boundary: every surface builds one, and it is checked here, once, by the
// generated validator, before admission reads or writes anything. A command
// that does not match is `validation-failed`, each offending field named by its
// pointer into the command (`/options/temperature`), which a surface may map
// back to its own request.
import type { ErrorObject } from 'ajv';
import type { AdmissionCommand } from '../../generated/protocol-schemas.js';
import { PalaiError, type FieldError } from '../errors/palai-error.js';
import { lazyOnce } from '../lazy.js';
import { schemaFieldError } from '../schemas/json-schema-drafts.js';
import { isSessionKeySource, sessionKeySources } from '../sessions/session-keys.js';

export type { AdmissionCommand };

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

/**
 * Refuses a command that does not match its schema, names a session-key source
 * nobody declared, or carries a JSON Schema no draft's compiler takes, naming the fields.
 */
export async function assertAdmissionCommand(command: unknown): Promise<void> {
  const validate = await validator();
  const errors = validate(command)
    ? [...undeclaredSource(command as AdmissionCommand), ...unusableSchemas(command as AdmissionCommand)]
    : fieldErrors(validate.errors ?? []);
  if (errors.length === 0) return;
  const first = errors[0] ?? { pointer: '', detail: 'is invalid' };
  throw new PalaiError('validation-failed', `The admission command's ${first.pointer || 'body'} ${first.detail}.`, { errors });
}
