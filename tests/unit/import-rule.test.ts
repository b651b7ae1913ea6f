// The dependency rule (ARCHITECTURE.md §1) as scripts/check-imports.mjs checks
// it: first on a small fixture tree where each rule is broken once and each
// allowed import appears once, then on this repository, which must obey it.
// A fixture line that must be reported ends with `// breaks: <words of the rule>`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const checker = join(repoRoot, 'scripts/check-imports.mjs');

interface Violation {
  file: string;
  line: number;
  target: string;
  rule: string;
}

const fixture: Record<string, string> = {
  'core/runner/step.ts': `
import express from 'express'; // breaks: surface library
import type { App } from '@slack/bolt'; // breaks: surface library
import { Kafka } from 'kafkajs'; // breaks: surface library
import { SQSClient } from '@aws-sdk/client-sqs'; // breaks: surface library
import type { ResponseItem } from 'openai/resources/responses/responses'; // breaks: surface library
import Anthropic from '@anthropic-ai/sdk'; // breaks: surface library
import pg from 'pg'; // breaks: database drivers
import { PGlite } from '@electric-sql/pglite'; // breaks: database drivers
import { route } from '../../adapters/http/app.js'; // breaks: core never imports
import { slack } from '../../bots/slack/bot.js'; // breaks: core never imports
import { main } from '../../cli/main.js'; // breaks: core never imports
import { PalaiError } from '../errors/palai-error.js';
import { admitJob } from '../surfaces/queue/admission.js'; // breaks: no kernel folder imports core/surfaces
import type { QueueApi } from '../surfaces/queue/queue-api.js'; // breaks: no kernel folder imports core/surfaces
import type { components } from '../../generated/openapi.js';
import { readFile } from 'node:fs/promises';
import Ajv from 'ajv';
`,
  'core/surfaces/queue/admission.ts': `
import { admitWithin } from '../../responses/admission.js';
import type { Db } from '../../store/db.js';
import { parseJob } from './jobs.js';
import { admitSlackMessage } from '../slack/admission.js'; // breaks: a wing never imports another wing
`,
  'adapters/queue/runner.ts': `
import type { QueueApi } from '../../core/surfaces/queue/queue-api.js';
import type { QueueMessage } from '../../core/surfaces/queue/queue-port.js';
import { admitJob } from '../../core/surfaces/queue/admission.js'; // breaks: its own wing's API and port files
import type { SlackApi } from '../../core/surfaces/slack/slack-api.js'; // breaks: its own wing's API and port files
import type { SlackMessage } from '../../core/surfaces/slack/slack-bots-port.js'; // breaks: its own wing's API and port files
import { frameHash } from '../../core/surfaces/queue/wire/frame-hash.js';
import { botFrame } from '../../core/surfaces/slack/wire/frames.js'; // breaks: its own wing's API and port files
`,
  'core/store/postgres.ts': `
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
`,
  'adapters/http/routes/agents.ts': `
import { kernel } from '../../../core/kernel.js'; // breaks: only core/api
import type { Db } from '../../../core/store/db.js'; // breaks: Db handle
export { listAgents } from '../../../core/agents/agents.js'; // breaks: only core/api
import { // breaks: only core/api
  isTerminal,
  type ResponseStatus,
} from '../../../core/responses/status.js';
const journal = await import('../../../core/journal/journal.js'); // breaks: only core/api
import { mcpServer } from '../../mcp/server.js'; // breaks: another surface
import { openAiClient } from '../../models/shared/openai-client.js'; // breaks: another surface
import { hub } from '../../../cli/hub.js'; // breaks: composition root
// import { kernel } from '../../../core/kernel.js';
/* a commented-out load: import('../../../core/kernel.js') */
import { createAgent } from '../../../core/api/agents.js';
import type { ModelPort } from '../../../core/models/model-port.js';
import { PalaiError } from '../../../core/errors/palai-error.js';
import { newId } from '../../../core/ids.js';
import { isTerminal as ended } from '../../../core/response-status.js';
import { loadConfig } from '../../../core/config.js';
import type { Logger } from '../../../core/logger.js';
import { validators } from '../../../generated/validators.js';
import { sendProblem } from '../problem.js';
import express from 'express';
`,
  'adapters/models/openai/openai-responses.ts': `
import { openAiClient } from '../shared/openai-client.js';
import { mapRequest } from '../anthropic/request-mapping.js'; // breaks: another surface
import OpenAI from 'openai';
`,
  'adapters/models/shared/openai-client.ts': `
import type { ModelPort } from '../../../core/models/model-port.js';
import { mapEvents } from '../openai/openai-responses.js'; // breaks: another surface
`,
  'adapters/nodes/companion/companion.ts': `
import { planFault } from '../../../core/surfaces/nodes/wire/execution-plan.js';
import type { NodeCatalog } from '../../../generated/schemas.js';
import { Ledger } from './ledger.js';
import WebSocket from 'ws';
import type { NodeGatewayPort } from '../../../core/surfaces/nodes/node-gateway-port.js'; // breaks: the companion (adapters/nodes/companion/) never imports the hub
import { PalaiError } from '../../../core/errors/palai-error.js'; // breaks: never imports the hub
import { loadConfig } from '../../../core/config.js'; // breaks: never imports the hub
import { sendProblem } from '../../http/problem.js'; // breaks: never imports the hub
import { gateway } from '../gateway.js'; // breaks: never imports the hub
`,
  'adapters/nodes/gateway.ts': `
import type { NodesSurfaceApi } from '../../core/surfaces/nodes/nodes-api.js';
import { Ledger } from './companion/ledger.js'; // breaks: nothing of the hub imports the companion
`,
  'core/surfaces/autonomy/cron.ts': `
import { Cron } from 'croner';
`,
  'core/surfaces/autonomy/scheduler.ts': `
import { Cron } from 'croner'; // breaks: a cron library (croner) is imported only by
import { parseSchedule } from './cron.js';
`,
  'bots/slack/bot.ts': `
import cron from 'node-cron'; // breaks: cron library
import { kernel } from '../../core/kernel.js'; // breaks: only core/api
import { sendProblem } from '../../adapters/http/problem.js'; // breaks: another surface
import { main } from '../../cli/main.js'; // breaks: composition root
import type { JournalReader } from '../../core/journal/journal-port.js';
import { App } from '@slack/bolt';
`,
};

const workdirs: string[] = [];
after(() => workdirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function writeTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'palai-imports-'));
  workdirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text.trimStart());
  }
  return root;
}

function runChecker(root: string, ...flags: string[]): { code: number | null; stdout: string } {
  const run = spawnSync(process.execPath, [checker, ...flags, root], { encoding: 'utf8' });
  return { code: run.status, stdout: run.stdout };
}

/** The violations the fixture's markers call for, keyed `file:line`. */
function markedViolations(files: Record<string, string>): Map<string, string> {
  const expected = new Map<string, string>();
  for (const [path, text] of Object.entries(files)) {
    text
      .trimStart()
      .split('\n')
      .forEach((line, i) => {
        const marker = /\/\/ breaks: (.+)$/.exec(line);
        if (marker) expected.set(`${path}:${i + 1}`, marker[1]);
      });
  }
  return expected;
}

test('each rule reports its violation, at its line, and the allowed imports pass', () => {
  const { code, stdout } = runChecker(writeTree(fixture), '--json');
  assert.equal(code, 1);
  const found = JSON.parse(stdout) as Violation[];
  const expected = markedViolations(fixture);
  assert.deepEqual(found.map((v) => `${v.file}:${v.line}`).sort(), [...expected.keys()].sort());
  for (const v of found) assert.ok(v.rule.includes(expected.get(`${v.file}:${v.line}`)!), `${v.file}:${v.line} → ${v.target}: ${v.rule}`);
});

test('a violation names the resolved repository path it imports, or the package', () => {
  const found = JSON.parse(runChecker(writeTree(fixture), '--json').stdout) as Violation[];
  const targets = new Set(found.map((v) => v.target));
  for (const target of [
    'core/store/db.ts',
    'core/responses/status.ts',
    'adapters/models/shared/openai-client.ts',
    'cli/hub.ts',
    '@slack/bolt',
    'openai',
    'pg',
  ]) {
    assert.ok(targets.has(target), target);
  }
});

test('without --json each violation is one line `file:line imports target — rule`', () => {
  const { code, stdout } = runChecker(writeTree({ 'adapters/http/app.ts': "import { kernel } from '../../core/kernel.js';\n" }));
  assert.equal(code, 1);
  assert.match(stdout.trim(), /^adapters\/http\/app\.ts:1 imports core\/kernel\.ts — a surface imports from core only core\/api\/\*\*/);
});

test('a tree that keeps the rule passes with exit code 0', () => {
  const clean = Object.fromEntries(
    Object.entries(fixture).map(([path, text]) => [
      path,
      text
        .split('\n')
        .filter((l) => !l.includes('// breaks:'))
        .join('\n'),
    ]),
  );
  const { code, stdout } = runChecker(writeTree(clean), '--json');
  assert.deepEqual(JSON.parse(stdout), []);
  assert.equal(code, 0);
});

test('this repository keeps the dependency rule', () => {
  const { code, stdout } = runChecker(repoRoot, '--json');
  const found = JSON.parse(stdout) as Violation[];
  assert.deepEqual(
    found.map((v) => `${v.file}:${v.line} imports ${v.target} — ${v.rule}`),
    [],
  );
  assert.equal(code, 0);
});
