// The REST request of a run: OpenAI's CreateResponseRequest as the kernel's
// admission command (protocols/admission.schema.json), and the kernel's errors
// back in the body's terms. `model` is the agent, `session_id` (or OpenAI's
// `conversation`) the session, the sampling and tool knobs the run's options,
// `text.format` its output format; a string input is one user message. Null
// means "not set" in OpenAI's body; the command leaves such fields out.
import type { AdmissionCommand, AdmitOptions, KernelApi, ResponseState } from '../../core/api/index.js';
import { isPalaiError, PalaiError, type FieldError } from '../../core/errors/palai-error.js';
import type { CreateResponseRequest } from '../../generated/schemas.js';

type AdmissionOptions = NonNullable<AdmissionCommand['options']>;

/** OpenAI's `conversation` (an id or `{id}`) is Palai's `session_id`; naming two different ones is refused. */
function sessionIdOf(request: CreateResponseRequest): string | undefined {
  const { conversation } = request;
  const id = typeof conversation === 'string' ? conversation : conversation?.id;
  if (id === undefined) return request.session_id;
  if (request.session_id !== undefined && request.session_id !== id) {
    throw new PalaiError('invalid-request', 'conversation and session_id name different sessions; give one.', {
      errors: [{ pointer: '/conversation', detail: 'differs from session_id' }],
    });
  }
  return id;
}

/** The values set (neither null nor absent) of an object's fields. */
const setFields = <T extends object>(fields: T): { [K in keyof T]?: NonNullable<T[K]> } =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value != null)) as { [K in keyof T]?: NonNullable<T[K]> };

function runOptions(request: CreateResponseRequest): AdmissionOptions {
  const { temperature, top_p, max_output_tokens, parallel_tool_calls, tool_choice, tools, user } = request;
  return setFields({ temperature, top_p, max_output_tokens, parallel_tool_calls, tool_choice, tools, text_format: request.text?.format, user });
}

/** The command a REST request asks the kernel to admit. */
export function admissionCommand(request: CreateResponseRequest): AdmissionCommand {
  const sessionId = sessionIdOf(request);
  const options = runOptions(request);
  const { model: agent, instructions, previous_response_id, background, metadata } = request;
  return {
    ...setFields({ agent, instructions, previous_response_id, background, metadata }),
    input: typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input,
    ...(sessionId !== undefined ? { session: { kind: 'id', id: sessionId } } : {}),
    ...(Object.keys(options).length > 0 ? { options } : {}),
  };
}

/** Where a field of the command came from in the body, by the command's pointer prefix (the rest of the pointer follows as it is). */
const BODY_FIELDS: ReadonlyArray<readonly [command: string, body: string]> = [
  ['/agent', '/model'],
  ['/options/text_format', '/text/format'],
  ['/options', ''],
];

/** A pointer into the command as one into `request`. */
function bodyPointer(pointer: string, request: CreateResponseRequest): string {
  const under = (prefix: string) => pointer === prefix || pointer.startsWith(`${prefix}/`);
  // The session is one field of the body (`conversation` counts as `session_id`), and a string input is one message.
  if (under('/session')) return '/session_id';
  if (typeof request.input === 'string' && under('/input')) return '/input';
  const field = BODY_FIELDS.find(([command]) => under(command));
  return field ? field[1] + pointer.slice(field[0].length) : pointer;
}

/**
 * Admits the command made from `request`; a kernel error naming fields of the
 * command names the body's fields instead, so a client reads it against what it sent.
 */
export async function admitRequest(
  api: KernelApi,
  projectId: string,
  request: CreateResponseRequest,
  command: AdmissionCommand,
  options?: AdmitOptions,
): Promise<ResponseState> {
  try {
    return await api.responses.admit(projectId, command, options);
  } catch (error) {
    if (!isPalaiError(error) || error.errors === undefined) throw error;
    const errors: FieldError[] = error.errors.map((e) => ({ ...e, pointer: bodyPointer(e.pointer, request) }));
    throw new PalaiError(error.slug, error.message, { errors, extensions: error.extensions, cause: error.cause });
  }
}
