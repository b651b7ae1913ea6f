// Reading an agents file for `palai agents apply`: one spec, a list, or several
// YAML documents. Every spec is checked against the OpenAPI schema, then for
// what a schema cannot say, then (with the store open) for what it refers to,
// and all problems are reported at once, so a bad file changes nothing.
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import { validateBody } from '../../adapters/http/validation.js';
import { checkAgentSpec } from '../../core/agents/agent-spec.js';
import { PalaiError, type FieldError } from '../../core/errors/palai-error.js';
import type { CreateAgentRequest } from '../../generated/schemas.js';
import type { CommandContext } from './context.js';
import { CliError, messageOf } from './errors.js';

/** One spec of the file: which YAML document holds it, and its JSON pointer within that document. */
interface Entry {
  document: string;
  pointer: string;
  spec: unknown;
}

/** A valid spec of the file, and where it is in it. */
export interface FileAgent {
  request: CreateAgentRequest;
  entry: Entry;
}

/** The file's valid specs (`-` is stdin), or a CliError naming every problem. */
export async function readAgentFile(context: CommandContext, file: string): Promise<{ label: string; agents: FileAgent[] }> {
  const label = file === '-' ? 'stdin' : file;
  return { label, agents: validate(label, entriesOf(label, await readSource(context, file))) };
}

/** Refuses the file, naming every field, when a spec refers to what the project does not have (say, a model connection). */
export async function checkReferences(label: string, agents: FileAgent[], check: (request: CreateAgentRequest) => Promise<void>): Promise<void> {
  const problems: string[] = [];
  for (const { request, entry } of agents) {
    try {
      await check(request);
    } catch (error) {
      if (!(error instanceof PalaiError)) throw error;
      problems.push(...problemLines(entry, error));
    }
  }
  if (problems.length > 0) throw new CliError(`${label} has invalid agent specs; nothing was applied:`, problems);
}

/** `document 2: /1/model/connection: names no … (agent "x")`, one per field of the error. */
function problemLines({ document, pointer, spec }: Entry, error: PalaiError): string[] {
  const name = (spec as { name?: unknown } | null)?.name;
  const label = typeof name === 'string' ? ` (agent ${JSON.stringify(name)})` : '';
  const fields: FieldError[] = error.errors ?? [{ pointer: '', detail: error.message }];
  return fields.map((field) => `${document}${pointer + field.pointer || '(root)'}: ${field.detail}${label}`);
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
function validate(file: string, entries: Entry[]): FileAgent[] {
  const problems: string[] = [];
  const agents: FileAgent[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    try {
      const request = validateBody<CreateAgentRequest>('CreateAgentRequest', entry.spec);
      const { name: _name, ...fields } = request;
      checkAgentSpec(fields);
      if (seen.has(request.name)) throw new PalaiError('validation-failed', undefined, { errors: [{ pointer: '/name', detail: 'appears twice in the file' }] });
      seen.add(request.name);
      agents.push({ request, entry });
    } catch (error) {
      if (!(error instanceof PalaiError)) throw error;
      problems.push(...problemLines(entry, error));
    }
  }
  if (problems.length > 0) throw new CliError(`${file} has invalid agent specs; nothing was applied:`, problems);
  return agents;
}
