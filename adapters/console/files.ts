// Where the console's built files are: console/dist at the package root,
// reached from this module in the sources (adapters/console/) and in the
// compiled build (dist/adapters/console/) alike.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The directory holding the built index.html, or null when the console was not built. */
export function consoleFiles(): string | null {
  for (const root of [join(here, '../..'), join(here, '../../..')]) {
    const dir = join(root, 'console', 'dist');
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  return null;
}
