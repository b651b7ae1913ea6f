// What the operator writes and what the model sees: the stdio servers file
// (PALAI_MCP_STDIO_SERVERS_FILE), checked once at start with messages that name
// the entry and never an environment value; and the function names of MCP tools.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, loadConfig } from '../../core/config.js';
import { stdioServersOf } from '../../core/surfaces/mcp/create-mcp-api.js';
import { modelToolName } from '../../core/surfaces/mcp/mcp-servers-port.js';
import { MODEL_TOOL_NAME } from '../../core/tools/tool-port.js';
import { parseStdioDeclarations } from '../../core/surfaces/mcp/stdio-declarations.js';
import { cleanUpProcesses, tempDir } from '../support/cli.js';

after(cleanUpProcesses);

test("the file has the desktop hosts' shape, in JSON or YAML; fields default", () => {
  const json = parseStdioDeclarations(
    JSON.stringify({ mcpServers: { everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] } } }),
  );
  assert.deepEqual(json, [{ name: 'everything', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: {}, cwd: null, projects: null }]);
  const yaml = parseStdioDeclarations(
    'mcpServers:\n  files:\n    command: /usr/bin/files-mcp\n    env: { ROOT: /srv }\n    cwd: /srv\n    projects: [proj_a]\n',
  );
  assert.deepEqual(yaml, [{ name: 'files', command: '/usr/bin/files-mcp', args: [], env: { ROOT: '/srv' }, cwd: '/srv', projects: ['proj_a'] }]);
  assert.deepEqual(parseStdioDeclarations('mcpServers: {}'), []);
});

test('a wrong entry is named with what is wrong, and an env value never appears', () => {
  const cases: Array<[unknown, RegExp]> = [
    [{}, /an object "mcpServers"/],
    [{ mcpServers: { 'bad name': { command: 'x' } } }, /mcpServers\.bad name: a name is 1 to 32/],
    [{ mcpServers: { s: { url: 'https://example.com/mcp' } } }, /mcpServers\.s: only stdio servers .* POST \/v1\/mcp_servers/],
    [{ mcpServers: { s: { command: '' } } }, /mcpServers\.s\.command must be a non-empty string/],
    [{ mcpServers: { s: { command: 'x', args: 'a b' } } }, /mcpServers\.s\.args must be a list of strings/],
    [{ mcpServers: { s: { command: 'x', env: { TOKEN: 12345 } } } }, /mcpServers\.s\.env\.TOKEN must be a string/],
    [{ mcpServers: { s: { command: 'x', env: { 'NO-DASH': 'secret-value' } } } }, /"NO-DASH" is not an environment variable name/],
    [{ mcpServers: { s: { command: 'x', projects: [] } } }, /projects must be a non-empty list/],
    [{ mcpServers: { s: { command: 'x', shell: true } } }, /unknown field "shell"/],
  ];
  for (const [document, message] of cases) {
    assert.throws(
      () => parseStdioDeclarations(JSON.stringify(document)),
      (error: Error) => {
        assert.match(error.message, message);
        assert.ok(!error.message.includes('secret-value') && !error.message.includes('12345'));
        return true;
      },
    );
  }
  assert.throws(() => parseStdioDeclarations('mcpServers: ['), /not JSON or YAML/);
});

test('the loader reads the file PALAI_MCP_STDIO_SERVERS_FILE names, and a wrong one stops the start naming the variable', () => {
  const dir = tempDir('palai-mcp-stdio-config-');
  const good = join(dir, 'servers.json');
  writeFileSync(good, JSON.stringify({ mcpServers: { local: { command: 'node', args: ['server.js'], env: { KEY: 'k' } } } }));
  assert.deepEqual(
    stdioServersOf(loadConfig({ PALAI_MCP_STDIO_SERVERS_FILE: good })).map((s) => s.name),
    ['local'],
  );
  assert.deepEqual(stdioServersOf(loadConfig({})), []);
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'mcpServers:\n  local:\n    args: [x]\n');
  assert.throws(
    () => stdioServersOf(loadConfig({ PALAI_MCP_STDIO_SERVERS_FILE: bad })),
    (error: Error) => error instanceof ConfigError && /^PALAI_MCP_STDIO_SERVERS_FILE: .*bad\.yaml: mcpServers\.local\.command/.test(error.message),
  );
  assert.throws(() => stdioServersOf(loadConfig({ PALAI_MCP_STDIO_SERVERS_FILE: join(dir, 'missing.json') })), /cannot be read: ENOENT/);
});

test('tool names: mcp__<server>__<tool>, other characters made _, long ones cut with a hash that keeps them apart', () => {
  assert.equal(modelToolName('everything', 'get-sum'), 'mcp__everything__get-sum');
  assert.equal(modelToolName('files', 'read.file/v2 ü'), 'mcp__files__read_file_v2__');
  const long = 'a'.repeat(80);
  const one = modelToolName('srv', `${long}1`);
  const two = modelToolName('srv', `${long}2`);
  assert.equal(one.length, 64);
  assert.match(one, MODEL_TOOL_NAME);
  assert.notEqual(one, two);
  assert.equal(modelToolName('srv', `${long}1`), one, 'the same tool always has the same name');
});
