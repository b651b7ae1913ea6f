// `palai agents apply -f file.yaml`: declarative create-or-update of agents by
// name. Every spec in the file is validated against the OpenAPI schema before
// any is applied, so a bad file changes nothing.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { parseAllDocuments } from 'yaml';
import { validateBody } from '../../adapters/http/validation.js';
import { applyAgent } from '../../core/agents/agents.js';
import { checkAgentSpec } from '../../core/agents/agent-spec.js';
import { loadConfig } from '../../core/config.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import type { CreateAgentRequest } from '../../generated/schemas.js';
import { CliError, messageOf } from './errors.js';
import { projectFor } from './project.js';
import { withStore } from './store.js';

/** One spec of the file: which YAML document holds it, and its JSON pointer within that document. */
interface Entry {
  document: string;
  pointer: string;
  spec: unknown;
}

export function registerAgents(program: Command): void {
  const agents = program.command('agents').description('manage agents');
  agents
    .command('apply')
    .description('create or update the agents a YAML file describes (one spec, a list, or several documents)')
    .requiredOption('-f, --file <path>', 'YAML file with the CreateAgentRequest fields of each agent; - reads stdin')
    .option('--project <id|name>', 'project the agents belong to (default: the only project; required when there are several)')
    .action(async (options: { file: string; project?: string }) => {
      const label = options.file === '-' ? 'stdin' : options.file;
      const specs = validate(label, entriesOf(label, await readSource(options.file)));
      await withStore(loadConfig(), async (db) => {
        const project = await projectFor(db, options.project);
        for (const spec of specs) {
          const { agent, action } = await applyAgent(db, project.id, spec);
          console.log(`${action} ${agent.name} (revision ${agent.revision})`);
        }
      });
    });
}

async function readSource(file: string): Promise<string> {
  try {
    return file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${file}: ${messageOf(error)}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
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
