// @palai/sdk is published on its own: its package.json names the runtime
// dependencies its source imports, at the versions this repository installs
// and tests with.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const json = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8'));

test('the SDK depends on exactly the packages its source imports, at the versions installed here', () => {
  const sdk = json('sdk/package.json');
  const sources = readdirSync(join(root, 'sdk/src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const imported = new Set<string>();
  for (const file of sources) {
    for (const [, specifier] of readFileSync(join(root, 'sdk/src', file), 'utf8').matchAll(/from '([^'.][^']*)'/g)) imported.add(specifier);
  }
  assert.deepEqual([...imported].sort(), Object.keys(sdk.dependencies).sort());
  for (const [name, version] of Object.entries(sdk.dependencies)) {
    assert.equal(json(`node_modules/${name}/package.json`).version, version, `${name} is tested at the version the SDK names`);
    assert.equal(json('package.json').devDependencies[name], version, `${name} is pinned alike in the root package.json`);
  }
  assert.equal(sdk.name, '@palai/sdk');
  assert.ok(!sdk.private, 'publishable');
});
