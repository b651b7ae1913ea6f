// Reading the deploy files as the tools that consume them do: YAML with merge
// keys (Compose), multi-document streams (kubectl), env files (Compose's
// env_file), and the variables Palai's configuration loader reads.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

export const exists = (path: string): boolean => existsSync(join(ROOT, path));

/** One YAML document, `<<` merge keys resolved as Compose resolves them. */
export const yamlFile = (path: string): any => parse(read(path), { merge: true });

/** Every non-empty document of a YAML stream, as kubectl reads it. */
export function yamlDocuments(text: string): any[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('; '));
      return doc.toJS();
    })
    .filter((doc) => doc !== null && doc !== undefined);
}

/** Files under `dir` (repository-relative), recursively, sorted. */
export function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir))
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(join(ROOT, path)).isDirectory() ? filesUnder(path) : [relative(ROOT, join(ROOT, path))];
    });
}

/** `NAME=value` lines of an env file; comments and blank lines skipped, commented-out assignments ignored. */
export function envFile(path: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const line of read(path).split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) entries[match[1]] = match[2].trim();
  }
  return entries;
}

/** The environment variables core/config.ts reads (every `'NAME'` it passes to its readers). */
export function configVariables(): Set<string> {
  const source = read('core/config.ts');
  return new Set([...source.matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]));
}

/** Names that hold secrets: their values belong in a Secret or an env file, never in the manifests. */
export const SECRET_NAME = /(PASSWORD|SECRET|TOKEN|API_KEY|DATABASE_URL|CREDENTIAL)/i;

/**
 * A tool a test needs (a Compose CLI, kubectl): false (run it) when present; a skip reason when
 * absent on a developer's machine; under PALAI_REQUIRE_SERVICES=1 (CI) an absent tool fails the run.
 */
export function toolMissing(tool: string, present: boolean): false | string {
  if (present) return false;
  const reason = `${tool} is not installed on this machine`;
  if (process.env.PALAI_REQUIRE_SERVICES === '1') throw new Error(`${reason} (PALAI_REQUIRE_SERVICES=1)`);
  return reason;
}
