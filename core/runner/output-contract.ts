// The output contract: an agent with `output_schema` must answer with JSON that
// satisfies it. A violation earns one repair turn carrying the validation errors.
import type { AgentSpecFields, FunctionToolSpec, MessageItem } from '../../generated/schemas.js';
import { newId } from '../ids.js';
import { compileUserSchema } from '../schemas/json-schema-drafts.js';
import type { StoredRunOptions } from '../responses/responses.js';

/** The run's output contract: its own text format (json_schema, or json_object: any object) over the agent's output_schema. */
export function outputSchemaOf(spec: AgentSpecFields, options: StoredRunOptions): Record<string, unknown> | undefined {
  const format = options.text_format;
  if (format?.type === 'json_schema') return format.schema;
  if (format?.type === 'json_object') return { type: 'object' };
  return spec.output_schema;
}

/** The run's tool entries: the agent's own, then the request's client functions, then the entries its surface added. */
export function runToolSpecs(spec: AgentSpecFields, options: StoredRunOptions): Array<NonNullable<AgentSpecFields['tools']>[number]> {
  const own = (options.tools ?? []).map(({ name, description, parameters, strict }): FunctionToolSpec => ({
    type: 'function',
    name,
    ...(description ? { description } : {}),
    ...(parameters ? { parameters } : {}),
    ...(strict != null ? { strict } : {}),
  }));
  return [...(spec.tools ?? []), ...own, ...(options.tool_entries ?? [])];
}

/** The violations of `text` against `schema` (empty when it satisfies it). */
export function outputViolations(schema: Record<string, unknown>, text: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return [`the answer is not valid JSON (${(error as Error).message})`];
  }
  // Admission refused a schema no draft's compiler takes, so this one compiles (under its own `$schema`).
  const validate = compileUserSchema(schema, '');
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
}

export function repairRequest(answer: string, violations: string[]): MessageItem {
  const text = [
    'Your previous answer does not satisfy the required output JSON Schema.',
    `Answer: ${answer}`,
    `Violations: ${violations.join('; ')}`,
    'Reply again with only a JSON value that satisfies the schema.',
  ].join('\n');
  return { id: newId('msg'), type: 'message', role: 'developer', status: 'completed', content: [{ type: 'input_text', text }] };
}
