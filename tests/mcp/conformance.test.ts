// The MCP conformance suite's server scenarios against Palai's /mcp. Palai
// serves agents as tools and prompts and its responses and sessions as
// resources, not the suite's fixture tools, resources or prompts, so the
// scenarios that need those are listed, each with its reason, in
// conformance-expected-failures.yaml; every other scenario must pass. The suite
// connects without credentials, so it reaches Palai through a stand-in for a
// configured host that adds the project key to each request. The suite's client
// scenarios, against Palai's MCP client, are client-conformance.test.ts.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, runProcess, tempDir, cleanUpProcesses, userEnv } from '../support/cli.js';
import { describeEachStore } from '../support/hub.js';

const CONFORMANCE = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const EXPECTED_FAILURES = join(ROOT, 'tests', 'mcp', 'conformance-expected-failures.yaml');

after(cleanUpProcesses);

await describeEachStore('MCP conformance server scenarios', (ctx) => {
  let server: Server;
  let url = '';
  before(async () => {
    const key = ctx().apiKey;
    server = createServer((req, res) => {
      req.headers.authorization = `Bearer ${key}`;
      ctx().hub.app(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  test('every scenario passes except the listed ones, which fail for their stated reason', { timeout: 300_000 }, async () => {
    const output = tempDir('palai-mcp-conformance-');
    const result = await runProcess(
      process.execPath,
      [CONFORMANCE, 'server', '--url', url, '--expected-failures', EXPECTED_FAILURES, '-o', output],
      userEnv(),
      280_000,
    );
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  });
});
