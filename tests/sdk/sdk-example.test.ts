// examples/sdk/first-day.ts, run as a user runs it (tsx, the SDK by its
// package name) against a hub on a real port: every step it prints happened.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { describeEachStore } from '../support/hub.js';
import { listen, type Listening } from '../support/listen.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

await describeEachStore(
  'the SDK example',
  (ctx) => {
    let server: Listening;
    before(async () => {
      server = await listen(ctx().hub.app);
    });
    after(() => server.close());

    test('creates an agent, streams a run through a client tool and an approval, and lists the wakes of an objective', async () => {
      const env = { ...process.env, PALAI_URL: server.url, PALAI_API_KEY: ctx().apiKey };
      const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(process.execPath, ['--import', 'tsx', 'examples/sdk/first-day.ts'], { cwd: root, env, timeout: 120_000 }, (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      );
      assert.equal(code, 0, stderr);
      const lines = stdout.trim().split('\n');
      assert.match(lines[0], /^agent forecaster-\w+ \(agt_\w+\), revision 1$/);
      assert.match(stdout, /is waiting_for_tool: get_weather\(\{"city":"Oslo"\}\)/);
      assert.match(stdout, /is waiting_for_approval: echo\(\{"text":"Sunny in Oslo"\}\)/);
      assert.match(stdout, /is completed: Posted: it is sunny in Oslo\./);
      assert.match(lines.at(-1)!, /^wake of obj_\w+: admitted as resp_\w+$/);
    });
  },
  {},
  { stores: ['pglite'] },
);
