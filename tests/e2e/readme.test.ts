// The README as a user follows it: the "Run it" command starts the server, and the
// "Try it" block, run by bash as written (only the port changed), does what it says.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cleanUpProcesses, freePort, ROOT, runProcess, startPalai, tempDir, userEnv, within } from '../support/cli.js';
import { assertBodyMatchesSpec } from '../support/spec.js';
import { parseSse } from '../support/sse.js';

/** The first start of an embedded store runs initdb in WASM, which takes several seconds. */
const STARTUP_TIMEOUT_MS = 90_000;
const TRY_IT_TIMEOUT_MS = 60_000;

after(cleanUpProcesses);

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

/** The lines of the first shell block under the `## heading` section. */
function shellBlock(heading: string): string[] {
  const section = readme.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  assert.ok(section, `README has no "## ${heading}" section`);
  const block = section.match(/^```(?:sh|bash|shell)\n([\s\S]*?)^```$/m);
  assert.ok(block, `"## ${heading}" has no shell block`);
  return block[1].split('\n').filter((line) => line.trim() !== '');
}

/**
 * Runs `lines` in one bash with `set -e`, as one terminal would (the first line
 * exports a variable the others read), and returns each line's stdout; a NUL
 * written after each line tells them apart.
 */
async function runLines(lines: string[]): Promise<string[]> {
  const script = ['set -e', ...lines.flatMap((line) => [line, "printf '\\0'"])].join('\n');
  const result = await within(runProcess('bash', ['-c', script], userEnv(), TRY_IT_TIMEOUT_MS), TRY_IT_TIMEOUT_MS + 5_000, 'the Try it block');
  const outputs = result.stdout.split('\0');
  const finished = outputs.length - 1;
  assert.equal(result.code, 0, `line ${finished + 1} failed (exit ${result.code}): ${lines[finished]}\nstdout: ${outputs.at(-1)}\nstderr: ${result.stderr}`);
  assert.equal(finished, lines.length);
  return outputs.slice(0, -1);
}

test('the README commands work as written: Run it starts Palai, and every Try it line answers what the README says', { timeout: 180_000 }, async () => {
  const [runIt] = shellBlock('Run it');
  const key = runIt.match(/^npm install && PALAI_BOOTSTRAP_API_KEY=(\S+) npm start$/)?.[1];
  assert.ok(key, `the Run it command is not "npm install && PALAI_BOOTSTRAP_API_KEY=<key> npm start": ${runIt}`);

  // `npm start`, without npm in between: the script is the palai binary, or
  // scripts/run.mjs, which checks the build and then imports that binary.
  const start = packageJson.scripts.start.match(/^node (?:bin\/palai\.mjs|scripts\/run\.mjs) (.+)$/)?.[1];
  assert.ok(start, `npm start is not node bin/palai.mjs … or node scripts/run.mjs …: ${packageJson.scripts.start}`);
  if (packageJson.scripts.start.startsWith('node scripts/run.mjs'))
    assert.match(readFileSync(join(ROOT, 'scripts/run.mjs'), 'utf8'), /import\('\.\.\/bin\/palai\.mjs'\)/);
  const port = await freePort();
  const serve = startPalai(start.split(' '), userEnv({ PALAI_BOOTSTRAP_API_KEY: key, PALAI_HOME: join(tempDir('palai-readme-'), 'home'), PORT: String(port) }));
  const [, url] = await serve.waitFor(/^Palai listening on (http:\/\/\S+)$/m, STARTUP_TIMEOUT_MS);
  assert.match(url, new RegExp(`:${port}$`));

  const tryIt = shellBlock('Try it');
  assert.equal(tryIt.length, 5, tryIt.join('\n'));
  assert.equal(tryIt[0], `export PALAI_KEY=${key}`, 'Try it uses the key Run it created');
  for (const line of tryIt.slice(1)) assert.match(line, /^curl .*localhost:8080\//, 'every call goes to the port Run it listens on');
  const [, agentText, responseText, streamText, documentText] = await runLines(tryIt.map((line) => line.replaceAll('localhost:8080', `localhost:${port}`)));

  const agent = JSON.parse(agentText);
  assertBodyMatchesSpec(agent, 'createAgent', 201);
  assert.equal(agent.object, 'agent');
  assert.equal(agent.name, 'echo');

  const response = JSON.parse(responseText);
  assertBodyMatchesSpec(response, 'createResponse', 200);
  assert.equal(response.status, 'completed');
  assert.equal(response.output_text, 'Hello, Palai');

  assert.ok(streamText.includes('event: response.output_text.delta'), streamText);
  const frames = parseSse(streamText);
  assert.equal(frames.at(-1)?.event, 'response.completed', streamText);
  assert.equal(frames.at(-1)?.data.type, 'response.completed');
  const deltas = frames.filter((frame) => frame.event === 'response.output_text.delta');
  assert.deepEqual(
    deltas.map((frame) => frame.data.delta),
    ['stream', ' these', ' words'],
    'word by word',
  );
  assert.ok(
    frames.every((frame) => frame.id === String(frame.data.sequence_number)),
    'every event has an SSE id to resume from',
  );

  const document = readFileSync(join(ROOT, 'generated/openapi.json'));
  assert.equal(Buffer.byteLength(documentText), 300);
  assert.equal(documentText, document.subarray(0, 300).toString('utf8'));
  assert.match(documentText, /^\{\s*"openapi": "3\.1\.0"/);

  serve.child.kill('SIGTERM');
  assert.equal(await within(serve.exited, 20_000, 'shutdown after SIGTERM'), 0, serve.stderr());
});
