// The client scenarios of @modelcontextprotocol/conformance against Palai's MCP
// client: the suite starts its scenario's server and runs
// client-conformance-driver.ts, which registers that server with a hub and runs
// an agent calling its tool. The scenarios Palai's client cannot pass are listed,
// each with its reason, in conformance-expected-failures.yaml (`client:`); a
// listed one that starts passing fails the run too.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cleanUpProcesses, ROOT, runProcess, tempDir, userEnv } from '../support/cli.js';

const CONFORMANCE = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const EXPECTED_FAILURES = join(ROOT, 'tests', 'mcp', 'conformance-expected-failures.yaml');
const DRIVER = `${process.execPath} --import tsx ${join(ROOT, 'tests', 'mcp', 'client-conformance-driver.ts')}`;

/** The scenarios run here: every one but the authorization flows, and one of those to show why they fail. */
const SCENARIOS = ['initialize', 'tools_call', 'sse-retry', 'elicitation-sep1034-client-defaults', 'auth/metadata-default'];

after(cleanUpProcesses);

// Each scenario is a process of its own that mostly waits on its server: they run side by side.
describe('MCP conformance client scenarios', { concurrency: SCENARIOS.length }, () => {
  for (const scenario of SCENARIOS) {
    test(`client scenario ${scenario}: passes, or fails as listed`, { timeout: 120_000 }, async () => {
      const output = tempDir('palai-mcp-client-conformance-');
      const result = await runProcess(
        process.execPath,
        [CONFORMANCE, 'client', '--command', DRIVER, '--scenario', scenario, '--timeout', '90000', '--expected-failures', EXPECTED_FAILURES, '-o', output],
        userEnv(),
        110_000,
      );
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    });
  }
});
