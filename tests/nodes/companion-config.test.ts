// palai-node.yaml → the catalog a node advertises: the issue's example as
// written, a stable hash, and nothing of the node's paths in what the hub sees.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deriveCatalog } from '../../adapters/nodes/companion/catalog.js';
import { CompanionConfigError, parseCompanionConfig } from '../../adapters/nodes/companion/config.js';
import { catalogFault } from '../../core/surfaces/nodes/wire/catalog.js';

export const ISSUE_EXAMPLE = `policy: { allowed_commands: [shell.exec.v1, system.exec.v1], maximum_risk: privileged, max_timeout_seconds: 600, max_output_bytes: 262144 }
shell:
  program: /bin/bash
  working_scopes: { repo: /srv/app, scratch: /tmp/palai-scratch }
  executables: { git: /usr/bin/git }
  environment_names: [CI]
`;

const configError = (text: string): CompanionConfigError => {
  try {
    parseCompanionConfig(text);
  } catch (error) {
    assert.ok(error instanceof CompanionConfigError);
    return error;
  }
  assert.fail('the config was accepted');
};

test("the issue's example is accepted as written and offers both commands, privileged", () => {
  const { config, warnings } = parseCompanionConfig(ISSUE_EXAMPLE);
  assert.deepEqual(warnings, []);
  assert.deepEqual([...config.shell.workingScopes.keys()], ['repo', 'scratch']);
  const { catalog, hash } = deriveCatalog(config);
  assert.deepEqual(
    catalog.commands.map((c) => [c.name, c.risk, c.max_timeout_seconds, c.max_output_bytes]),
    [
      ['shell.exec.v1', 'privileged', 600, 262144],
      ['system.exec.v1', 'privileged', 600, 262144],
    ],
  );
  assert.match(hash, /^sha256:[0-9a-f]{64}$/);
  assert.equal(catalogFault(catalog), null);
});

test('the model-visible schemas name scope names, executable aliases and environment names only', () => {
  const { catalog } = deriveCatalog(parseCompanionConfig(ISSUE_EXAMPLE).config);
  const text = JSON.stringify(catalog);
  for (const path of ['/srv/app', '/tmp/palai-scratch', '/usr/bin/git', '/bin/bash', '/bin', '/usr']) assert.ok(!text.includes(path), path);
  const [shell, system] = catalog.commands.map((c) => c.input_schema as { properties: Record<string, { enum?: string[]; properties?: object }> });
  assert.deepEqual(shell.properties.working_scope.enum, ['repo', 'scratch']);
  assert.deepEqual(Object.keys(shell.properties.env.properties!), ['CI']);
  assert.deepEqual(system.properties.executable.enum, ['git']);
  assert.deepEqual(system.properties.working_scope.enum, ['repo', 'scratch']);
});

test('the catalog hash is stable: the same config, reordered or reformatted, hashes the same (the first scope is the default, so its order counts)', () => {
  const first = deriveCatalog(parseCompanionConfig(ISSUE_EXAMPLE).config).hash;
  const reordered = `shell:
  environment_names: [CI]
  executables:
    git: /usr/bin/git
  working_scopes:
    repo: /srv/app
    scratch: /tmp/palai-scratch
  program: /bin/bash
policy:
  max_output_bytes: 262144
  max_timeout_seconds: 600
  maximum_risk: privileged
  allowed_commands: [system.exec.v1, shell.exec.v1]
`;
  assert.equal(deriveCatalog(parseCompanionConfig(reordered).config).hash, first);
  assert.equal(deriveCatalog(parseCompanionConfig(ISSUE_EXAMPLE).config).hash, first);
  const changed = ISSUE_EXAMPLE.replace('[CI]', '[CI, NODE_ENV]');
  assert.notEqual(deriveCatalog(parseCompanionConfig(changed).config).hash, first);
  const otherDefault = ISSUE_EXAMPLE.replace('{ repo: /srv/app, scratch: /tmp/palai-scratch }', '{ scratch: /tmp/palai-scratch, repo: /srv/app }');
  assert.notEqual(deriveCatalog(parseCompanionConfig(otherDefault).config).hash, first);
});

test('a path changed behind a name leaves the catalog and its hash as they are', () => {
  const first = deriveCatalog(parseCompanionConfig(ISSUE_EXAMPLE).config).hash;
  const moved = ISSUE_EXAMPLE.replace('/srv/app', '/home/me/app').replace('/usr/bin/git', '/usr/local/bin/git');
  assert.equal(deriveCatalog(parseCompanionConfig(moved).config).hash, first);
});

test('empty allowed commands offer nothing', () => {
  const { catalog } = deriveCatalog(parseCompanionConfig(ISSUE_EXAMPLE.replace('[shell.exec.v1, system.exec.v1]', '[]')).config);
  assert.deepEqual(catalog.commands, []);
});

test('commands over the maximum risk are left out, with a warning (the default maximum is read)', () => {
  const { catalog, warnings } = deriveCatalog(parseCompanionConfig('policy: { allowed_commands: [shell.exec.v1] }\n').config);
  assert.deepEqual(catalog.commands, []);
  assert.match(warnings[0], /shell\.exec\.v1 is left out: its risk privileged is over policy\.maximum_risk read/);
});

test('unknown keys are reported and ignored; known keys keep their types', () => {
  const { config, warnings } = parseCompanionConfig(
    `${ISSUE_EXAMPLE}labels: [a]\n`.replace('max_output_bytes: 262144', 'max_output_bytes: 262144, color: blue'),
  );
  assert.deepEqual(warnings.sort(), ['palai-node.yaml: unknown key labels ignored', 'palai-node.yaml: unknown key policy.color ignored']);
  assert.equal(config.policy.maxOutputBytes, 262144);

  const wrong = configError(ISSUE_EXAMPLE.replace('max_timeout_seconds: 600', "max_timeout_seconds: 'ten'").replace('[CI]', '[CI, 1BAD]'));
  assert.ok(
    wrong.details.some((d) => d.startsWith('policy.max_timeout_seconds: must be integer')),
    wrong.details.join('\n'),
  );
  assert.ok(
    wrong.details.some((d) => d.startsWith('shell.environment_names.1: must match pattern')),
    wrong.details.join('\n'),
  );
});

test('a relative path, a missing policy, bad YAML and an unknown command are errors', () => {
  assert.match(configError(ISSUE_EXAMPLE.replace('/srv/app', 'srv/app')).details.join('\n'), /shell\.working_scopes\.repo: must be an absolute path/);
  assert.match(configError('shell: { program: /bin/sh }\n').details.join('\n'), /must have required property 'policy'/);
  assert.match(configError('policy: { allowed_commands: [shell.exec.v1\n').message, /not valid YAML/);
  const unknown = parseCompanionConfig('policy: { allowed_commands: [files.read.v1] }\n').config;
  assert.throws(
    () => deriveCatalog(unknown),
    (error: CompanionConfigError) =>
      error.details[0].startsWith(
        'files.read.v1 (it offers shell.exec.v1, system.exec.v1, workspace.read.v1, workspace.search.v1, workspace.write.v1, workspace.patch.v1)',
      ),
  );
});

test("the issue's files block is accepted beside policy and shell: the workspace commands are offered by profile alias, with no root shown", () => {
  const text = ISSUE_EXAMPLE.replace(
    '[shell.exec.v1, system.exec.v1]',
    '[shell.exec.v1, system.exec.v1, workspace.read.v1, workspace.search.v1, workspace.write.v1, workspace.patch.v1]',
  ).concat(`files:
  - alias: repo
    readable_roots: [/srv/app]
    writable_roots: [/srv/app]
    allow_create: true
    allow_overwrite: true
    max_file_bytes: 65536
`);
  const { config, warnings } = parseCompanionConfig(text);
  assert.deepEqual(warnings, []);
  assert.deepEqual(config.files[0], {
    alias: 'repo',
    revision: null,
    readableRoots: ['/srv/app'],
    writableRoots: ['/srv/app'],
    allowCreate: true,
    allowOverwrite: true,
    maxFileBytes: 65536,
    approval: { metadata: false, read: false, write: false },
  });
  const { catalog } = deriveCatalog(config);
  const workspace = catalog.commands.filter((c) => c.name.startsWith('workspace.'));
  assert.deepEqual(
    workspace.map((c) => [c.name, c.risk]),
    [
      ['workspace.patch.v1', 'write'],
      ['workspace.read.v1', 'read'],
      ['workspace.search.v1', 'read'],
      ['workspace.write.v1', 'write'],
    ],
  );
  for (const command of workspace) {
    assert.deepEqual((command.input_schema as any).properties.profile.enum, ['repo']);
    assert.ok(!JSON.stringify(command).includes('/srv/app'), `${command.name} shows no root`);
  }
  // A relative root, two profiles of one alias, a profile with no root: errors naming the key.
  const bad = (files: string) => {
    try {
      parseCompanionConfig(`policy: { allowed_commands: [] }\nfiles:\n${files}`);
    } catch (error) {
      return (error as CompanionConfigError).details.join('\n');
    }
    throw new Error('the config was accepted');
  };
  assert.match(bad('  - { alias: a, readable_roots: [srv] }\n'), /files\.0\.readable_roots: every root must be an absolute path/);
  assert.match(bad('  - { alias: a, readable_roots: [/a] }\n  - { alias: a, readable_roots: [/b] }\n'), /files\.1\.alias: a is the alias of another profile/);
  assert.match(bad('  - { alias: a }\n'), /files\.0: names no readable or writable root/);
});
