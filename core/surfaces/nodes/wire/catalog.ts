// A node's catalog as both sides read it: its hash, each descriptor's hash (an
// approval binds to them), and the limits the hub checks at admission.
import type { NodeCatalog, NodeCommandDescriptor } from '../../../../generated/schemas.js';
import { canonicalHash, canonicalJson } from './canonical-hash.js';
import { MAX_CATALOG_BYTES, MAX_CATALOG_COMMANDS, MAX_COMMAND_NAME, MAX_SCHEMA_BYTES } from './limits.js';

export const catalogHash = (catalog: NodeCatalog): string => canonicalHash(catalog);
export const descriptorHash = (descriptor: NodeCommandDescriptor): string => canonicalHash(descriptor);

/** Each command's descriptor hash, by name. */
export function descriptorHashes(catalog: NodeCatalog): Record<string, string> {
  return Object.fromEntries(catalog.commands.map((d) => [d.name, descriptorHash(d)]));
}

const utf8Bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** Why the hub refuses the catalog (over a limit, a name twice), or null. */
export function catalogFault(catalog: NodeCatalog): string | null {
  if (catalog.commands.length > MAX_CATALOG_COMMANDS) return `the catalog has more than ${MAX_CATALOG_COMMANDS} commands`;
  if (utf8Bytes(canonicalJson(catalog)) > MAX_CATALOG_BYTES) return `the catalog is over ${MAX_CATALOG_BYTES} bytes`;
  const names = new Set<string>();
  for (const descriptor of catalog.commands) {
    if (descriptor.name.length > MAX_COMMAND_NAME) return `a command name is over ${MAX_COMMAND_NAME} characters`;
    if (names.has(descriptor.name)) return `the command ${descriptor.name} is in the catalog twice`;
    names.add(descriptor.name);
    if (utf8Bytes(canonicalJson(descriptor.input_schema)) > MAX_SCHEMA_BYTES) return `the schema of ${descriptor.name} is over ${MAX_SCHEMA_BYTES} bytes`;
  }
  return null;
}

/** The tool name part of a command: `shell.exec.v1` → `shell_exec` (the version and dots dropped). */
export const commandToolName = (command: string): string => command.replace(/\.v[0-9]+$/u, '').replace(/\./gu, '_');
