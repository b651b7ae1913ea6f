// The container image (deploy/Dockerfile, .dockerignore), read as Docker reads
// it, since no Docker engine runs here: the build compiles what
// scripts/build.mjs compiles, the runtime holds compiled JavaScript and
// production dependencies only, runs as a non-root user reachable from outside
// the container, and reports its health without tools a slim image lacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configVariables, exists, read } from './support/files.js';

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  base: string;
  name: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages: continuation lines joined, comments dropped, ARGs before the first FROM substituted. */
function stages(text: string): Stage[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const globalArgs = new Map<string, string>();
  const result: Stage[] = [];
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
    const upper = keyword.toUpperCase();
    if (upper === 'ARG' && result.length === 0) {
      const [name, value = ''] = args.split('=');
      globalArgs.set(name, value);
    } else if (upper === 'FROM') {
      const [, image, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      result.push({ base: image.replace(/\$\{(\w+)\}/g, (_, arg) => globalArgs.get(arg) ?? ''), name: name ?? '', instructions: [] });
    } else {
      result.at(-1)?.instructions.push({ keyword: upper, args });
    }
  }
  return result;
}

const dockerfile = stages(read('deploy/Dockerfile'));
const stage = (name: string) => dockerfile.find((s) => s.name === name) ?? assert.fail(`no stage ${name}`);
const runtime = dockerfile.at(-1)!;
const all = (s: Stage, keyword: string) => s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const execForm = (args: string): string[] => JSON.parse(args);

/** COPY's sources and destination, with its flags apart. */
function copies(s: Stage): Array<{ from: string | null; sources: string[]; dest: string }> {
  return all(s, 'COPY').map((args) => {
    const words = args.split(/\s+/);
    const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length) ?? null;
    const paths = words.filter((w) => !w.startsWith('--'));
    return { from, sources: paths.slice(0, -1), dest: paths.at(-1)! };
  });
}

test('the build stage installs every dependency and compiles every directory scripts/build.mjs compiles', () => {
  const build = stage('build');
  assert.ok(
    all(build, 'RUN').some((r) => /^npm ci\b/.test(r) && !r.includes('--omit=dev')),
    'npm ci with the dev dependencies (esbuild)',
  );
  assert.ok(all(build, 'RUN').includes('npm run build'));
  const sourceDirs = JSON.parse(/const SOURCE_DIRS = (\[[^\]]*\])/.exec(read('scripts/build.mjs'))![1].replace(/'/g, '"')) as string[];
  const copied = copies(build).flatMap((c) => c.sources);
  for (const dir of [...sourceDirs, 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json'])
    assert.ok(copied.includes(dir), `the build stage copies ${dir}`);
});

test('the runtime stage holds production dependencies, dist/, bin/ and package.json, and nothing to compile', () => {
  const deps = stage('deps');
  assert.ok(all(deps, 'RUN').some((r) => r.includes('npm ci --omit=dev --ignore-scripts')));
  const runtimeCopies = copies(runtime);
  const has = (from: string | null, source: string) => runtimeCopies.some((c) => c.from === from && c.sources.includes(source));
  assert.ok(has('deps', '/app/node_modules'), 'node_modules from the production install');
  assert.ok(has('build', '/src/dist'), 'dist/ from the build (it carries the migrations, openapi.json and the validators)');
  assert.ok(has(null, 'bin'), 'bin/palai.mjs, the entry point');
  assert.ok(has(null, 'package.json'), 'package.json, read for --version');
  for (const source of runtimeCopies.filter((c) => c.from === null).flatMap((c) => c.sources)) {
    assert.ok(['bin', 'package.json'].includes(source), `the runtime copies ${source} from the sources, not from the build`);
    assert.ok(exists(source), `${source} exists`);
  }
});

test('the image runs as a non-root user, listens on every interface, and starts palai serve', () => {
  const user = all(runtime, 'USER').at(-1);
  assert.ok(user && !/^(root|0)(:|$)/.test(user), `USER ${user}`);
  const env = Object.fromEntries(all(runtime, 'ENV').flatMap((args) => [...args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])));
  assert.equal(env.HOST, '0.0.0.0');
  const exposed = all(runtime, 'EXPOSE').flatMap((a) => a.split(/\s+/));
  assert.ok(exposed.includes(env.PORT) && exposed.includes(env.PALAI_ADMIN_PORT), `EXPOSE ${exposed.join(' ')} covers PORT and PALAI_ADMIN_PORT`);
  const known = configVariables();
  for (const name of Object.keys(env).filter((n) => n.startsWith('PALAI_') || n === 'HOST' || n === 'PORT'))
    assert.ok(known.has(name), `${name} is a setting core/config.ts reads`);
  assert.deepEqual(execForm(all(runtime, 'ENTRYPOINT').at(-1)!), ['node', 'bin/palai.mjs']);
  assert.deepEqual(execForm(all(runtime, 'CMD').at(-1)!), ['serve']);
});

test('the health check asks /healthz on the admin port with Node itself, not curl or wget', () => {
  const check = all(runtime, 'HEALTHCHECK').at(-1) ?? assert.fail('no HEALTHCHECK');
  const command = execForm(check.slice(check.indexOf('CMD') + 3).trim());
  assert.equal(command[0], 'node');
  assert.match(command.join(' '), /\/healthz/);
  assert.match(command.join(' '), /PALAI_ADMIN_PORT/);
});

test('every base image is pinned by a tag', () => {
  for (const s of dockerfile) {
    if (dockerfile.some((other) => other.name === s.base)) continue;
    assert.match(s.base, /^[\w./-]+:[\w.-]+$/, `FROM ${s.base}`);
    assert.doesNotMatch(s.base, /:latest$/);
  }
});

test('.dockerignore admits only what the Dockerfile copies: no local store, env file, node_modules or dist/', () => {
  const lines = read('.dockerignore')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  assert.equal(lines[0], '*', 'an allow-list: everything is ignored first');
  const allowed = lines.slice(1).map((l) => (assert.match(l, /^![\w.-]+\/?$/), l.slice(1).replace(/\/$/, '')));
  const admitted = (path: string) => allowed.includes(path.split('/')[0]);
  for (const s of dockerfile)
    for (const c of copies(s).filter((c) => c.from === null)) for (const source of c.sources) assert.ok(admitted(source), `${source} is in the build context`);
  for (const path of ['.palai/db', 'deploy/compose/palai.env', 'node_modules/x', 'dist/cli/main.js', '.git/config'])
    assert.ok(!admitted(path), `${path} stays out`);
});
