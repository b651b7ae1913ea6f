// Reading an agents file for `palai agents apply`: one spec, a list, or several
// YAML documents. Every spec is checked against the OpenAPI schema, then for
// what a schema cannot say, and all problems are reported at once, so a bad
// file changes nothing.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { validateBody } from '../../adapters/http/validation.js';
import { checkAgentSpec } from '../../core/agents/agent-spec.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { CreateAgentRequest } from '../../generated/schemas.js';
import type { CommandContext } from './context.js';
import { CliError, messageOf } from './errors.js';

/** One spec of the file: which YAML document holds it, and its JSON pointer within that document. */
interface Entry {
  document: string;
  pointer: string;
  spec: unknown;
}

/** The valid specs of `file` (`-` is stdin), or a CliError naming every problem. */
export async function readAgentFile(context: CommandContext, file: string): Promise<CreateAgentRequest[]> {
  const label = file === '-' ? 'stdin' : file;
  return validate(label, entriesOf(label, await readSource(context, file)));
}

async function readSource(context: CommandContext, file: string): Promise<string> {
  try {
    return file === '-' ? await context.readStdin() : await readFile(context.resolvePath(file), 'utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${file}: ${messageOf(error)}`);
  }
}

function entriesOf(file: string, source: string): Entry[] {
  const documents = parseAllDocuments(source);
  const entries: Entry[] = [];
  if (!('empty' in documents)) {
    documents.forEach((parsed, index) => {
      const error = parsed.errors[0];
      if (error) throw new CliError(`${file} is not valid YAML: ${error.message.split('\n')[0].replace(/:$/, '')}`);
      const value: unknown = parsed.toJS();
      if (value === null || value === undefined) return;
      const document = documents.length > 1 ? `document ${index + 1}: ` : '';
      if (Array.isArray(value)) value.forEach((spec, i) => entries.push({ document, pointer: `/${i}`, spec }));
      else entries.push({ document, pointer: '', spec: value });
    });
  }
  if (entries.length === 0) throw new CliError(`${file} holds no agent spec.`);
  return entries;
}

/** Checks every entry (schema, then what a schema cannot say) and reports all problems at once. */
function validate(file: string, entries: Entry[]): CreateAgentRequest[] {
  const problems: string[] = [];
  const specs: CreateAgentRequest[] = [];
  const seen = new Set<string>();
  for (const { document, pointer, spec } of entries) {
    const name = (spec as { name?: unknown } | null)?.name;
    const label = typeof name === 'string' ? ` (agent ${JSON.stringify(name)})` : '';
    try {
      const request = validateBody<CreateAgentRequest>('CreateAgentRequest', spec);
      const { name: _name, ...fields } = request;
      checkAgentSpec(fields);
      if (seen.has(request.name)) throw new PalaiError('validation-failed', undefined, { errors: [{ pointer: '/name', detail: 'appears twice in the file' }] });
      seen.add(request.name);
      specs.push(request);
    } catch (error) {
      if (!(error instanceof PalaiError)) throw error;
      for (const field of error.errors ?? [{ pointer: '', detail: error.message }]) {
        problems.push(`${document}${pointer + field.pointer || '(root)'}: ${field.detail}${label}`);
      }
    }
  }
  if (problems.length > 0) throw new CliError(`${file} has invalid agent specs; nothing was applied:`, problems);
  return specs;
}
