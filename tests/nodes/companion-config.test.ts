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
    (error: CompanionConfigError) => error.details[0].startsWith('files.read.v1 (it offers shell.exec.v1, system.exec.v1)'),
  );
});
