// The operator's stdio MCP servers, read once at start from the file
// PALAI_MCP_STDIO_SERVERS_FILE names. The shape is the one desktop MCP hosts use,
// so an entry can be copied over as it is:
//
//   { "mcpServers": { "everything": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
//                                     "env": { "KEY": "…" }, "cwd": "/srv", "projects": ["proj_…"] } } }
//
// JSON or YAML. A wrong file stops the start with a message naming the entry and
// the field; values of `env` are never part of a message. The YAML parser is
// loaded only to read a file: a hub without one never loads it (the config is
// read synchronously, and yaml ships CommonJS, so it is required).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { StdioServerDeclaration } from './mcp-servers-port.js';

let yaml: typeof Yaml | null = null;
const parse = (text: string): unknown => (yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml).parse(text);

/** A name an MCP server may have (operator's or API caller's): it becomes part of tool names. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FIELDS = new Set(['command', 'args', 'env', 'cwd', 'projects']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

function declaration(name: string, entry: unknown): StdioServerDeclaration {
  const where = `mcpServers.${name}`;
  if (!SERVER_NAME.test(name)) throw new Error(`${where}: a name is 1 to 32 letters, digits, _ and -, starting with a letter or digit`);
  if (!isObject(entry)) throw new Error(`${where} must be an object with a command`);
  if ('url' in entry || 'type' in entry) throw new Error(`${where}: only stdio servers are declared here; register an HTTP server with POST /v1/mcp_servers`);
  const unknown = Object.keys(entry).filter((key) => !FIELDS.has(key));
  if (unknown.length > 0) throw new Error(`${where}: unknown field ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known: ${[...FIELDS].join(', ')})`);
  const { command, args = [], env = {}, cwd = null, projects = null } = entry;
  if (typeof command !== 'string' || command.trim() === '') throw new Error(`${where}.command must be a non-empty string`);
  if (!isStrings(args)) throw new Error(`${where}.args must be a list of strings`);
  if (!isObject(env)) throw new Error(`${where}.env must be an object of strings`);
  for (const [key, value] of Object.entries(env)) {
    if (!ENV_NAME.test(key)) throw new Error(`${where}.env: ${JSON.stringify(key)} is not an environment variable name`);
    if (typeof value !== 'string') throw new Error(`${where}.env.${key} must be a string`);
  }
  if (cwd !== null && typeof cwd !== 'string') throw new Error(`${where}.cwd must be a string`);
  if (projects !== null && (!isStrings(projects) || projects.length === 0)) throw new Error(`${where}.projects must be a non-empty list of project ids`);
  return { name, command, args, env: env as Record<string, string>, cwd, projects };
}

/** The declarations of a file's text; throws an Error whose message says which entry is wrong and why. */
export function parseStdioDeclarations(text: string): StdioServerDeclaration[] {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new Error(`not JSON or YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!isObject(document) || !isObject(document.mcpServers)) throw new Error('it must hold an object "mcpServers" of servers by name');
  return Object.entries(document.mcpServers).map(([name, entry]) => declaration(name, entry));
}

/** Reads and checks the file; none when no file is named. */
export function readStdioDeclarations(path: string | null): StdioServerDeclaration[] {
  if (path === null) return [];
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return parseStdioDeclarations(text);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
}
