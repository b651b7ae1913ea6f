// `palai node` as an operator types it, before any hub is involved: a bad
// config or hub URL stops it with exit 2 and says why, and `status` of an
// empty home says there is no identity yet.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cleanUpProcesses, runPalai, startPalai, tempDir, userEnv } from '../support/cli.js';
import { until } from '../support/until.js';

after(cleanUpProcesses);

const HUB = 'ws://127.0.0.1:9/v1/nodes/connect';

test('a config of the wrong types is refused with exit 2, each fault named, nothing made in the home', async () => {
  const dir = tempDir('palai-node-cli-');
  const config = join(dir, 'palai-node.yaml');
  writeFileSync(config, 'policy: { allowed_commands: shell.exec.v1, max_output_bytes: -1 }\nshell: { working_scopes: { repo: relative/path } }\n');
  const home = join(dir, 'home');
  const run = await runPalai(['node', 'run', '--hub', HUB, '--config', config, '--home', home], userEnv(), 30_000);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /palai node: .*palai-node\.yaml is not a valid companion config/);
  assert.match(run.stderr, /policy\.allowed_commands: must be array/);
  assert.match(run.stderr, /policy\.max_output_bytes: must be >= 1/);
  assert.equal(existsSync(home), false);
});

test('a missing config file and a hub that is not a ws(s) URL are exit 2', async () => {
  const dir = tempDir('palai-node-cli-');
  const missing = await runPalai(['node', 'run', '--hub', HUB, '--config', join(dir, 'nope.yaml'), '--home', join(dir, 'home')], userEnv(), 30_000);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /cannot read the config .*nope\.yaml: ENOENT/);
  const config = join(dir, 'palai-node.yaml');
  writeFileSync(config, 'policy: { allowed_commands: [] }\n');
  const http = await runPalai(
    ['node', 'run', '--hub', 'http://127.0.0.1/v1/nodes/connect', '--config', config, '--home', join(dir, 'home')],
    userEnv(),
    30_000,
  );
  assert.equal(http.code, 2, http.stderr);
  assert.match(http.stderr, /--hub must be a ws:\/\/ or wss:\/\/ URL/);
});

test('status of a home without an identity says so, exit 1', async () => {
  const home = tempDir('palai-node-home-');
  const run = await runPalai(['node', 'status', '--home', home], userEnv(), 30_000);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /no node identity in .* \(palai node run makes one\)/);
});

test('a second palai node run on a home in use exits 1 naming the first; a lock left by a killed one is taken over', async () => {
  const dir = tempDir('palai-node-cli-');
  const config = join(dir, 'palai-node.yaml');
  writeFileSync(config, 'policy: { allowed_commands: [] }\n');
  const home = join(dir, 'home');
  // Port 9 refuses: the first keeps reconnecting, holding its home.
  const first = startPalai(['node', 'run', '--hub', HUB, '--config', config, '--home', home], userEnv());
  await until('the first holds the home', () => existsSync(join(home, 'companion.lock')));
  const second = await runPalai(['node', 'run', '--hub', HUB, '--config', config, '--home', home], userEnv(), 30_000);
  assert.equal(second.code, 1, second.stderr);
  assert.match(second.stderr, new RegExp(`another palai node run \\(pid ${first.child.pid}\\) uses the home`));
  first.child.kill('SIGKILL');
  await first.exited;
  const third = startPalai(['node', 'run', '--hub', HUB, '--config', config, '--home', home], userEnv());
  await until('the third took the lock over', () => readFileSync(join(home, 'companion.lock'), 'utf8').trim() === String(third.child.pid));
  third.child.kill('SIGTERM');
  assert.equal(await third.exited, 0, third.stderr());
  assert.equal(existsSync(join(home, 'companion.lock')), false, 'released on exit');
});
