// The Python `openai` SDK as a Palai client: a virtual environment with the SDK
// (made once, then cached under the temporary directory), and a short script
// (python-openai-client.py) run against the hub: text, a stream, a tool round
// trip, a chat completion and an error. No Python or no SDK fails the test:
// the SDK is a client Palai promises to work with.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { cityAnswer, describeClient, fakeAgent, weatherScript } from './client-hub.js';

const run = promisify(execFile);
const SDK = 'openai>=2,<4';
const venv = join(tmpdir(), 'palai-client-python-openai');
const python = join(venv, 'bin', 'python');

/** The cached environment, or a new one (built aside, then moved in place, so a half-built one is never used). */
async function pythonWithSdk(): Promise<string> {
  if (existsSync(python)) return python;
  const building = mkdtempSync(join(tmpdir(), 'palai-client-python-'));
  await run('python3', ['-m', 'venv', building]);
  // Few retries: where the public index is out of reach, pip's configured local index answers at once.
  const env = { ...process.env, PIP_RETRIES: process.env.PIP_RETRIES ?? '1', PIP_DISABLE_PIP_VERSION_CHECK: '1' };
  await run(join(building, 'bin', 'pip'), ['install', '--quiet', SDK], { env, maxBuffer: 16 * 1024 * 1024 });
  try {
    renameSync(building, venv);
  } catch (error) {
    // Another test run finished its environment first: use that one.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(python)) throw error;
  }
  return python;
}

await describeClient('Python openai SDK', (ctx) => {
  test('text, a stream, a tool round trip, structured output, multi-turn, a chat completion and a readable error', async () => {
    const interpreter = await pythonWithSdk();
    const env = {
      ...process.env,
      PALAI_API_KEY: ctx().apiKey,
      PALAI_BASE_URL: ctx().baseURL,
      ECHO_AGENT: await fakeAgent(ctx),
      WEATHER_AGENT: await fakeAgent(ctx, weatherScript()),
      CITY_AGENT: await fakeAgent(ctx, [{ json: cityAnswer }]),
      TURNS_AGENT: await fakeAgent(ctx, [{ text: 'first answer' }, { text: 'second answer' }]),
    };
    const { stdout } = await run(interpreter, [join(import.meta.dirname, 'python-openai-client.py')], { env });
    const seen = JSON.parse(stdout);
    assert.match(seen.version, /^[23]\./);
    assert.equal(seen.text, 'hello from python');
    assert.deepEqual(seen.stream, { deltas: ['one', ' two', ' three'], final: 'one two three' });
    assert.deepEqual(seen.tool, { name: 'get_weather', arguments: { city: 'Oslo' }, final: 'It is sunny in Oslo' });
    assert.deepEqual(seen.structured, cityAnswer, 'responses.parse with a pydantic model');
    assert.deepEqual(seen.multi_turn, { first: 'first answer', chained: 'second answer', resent: 'second answer' }, 'the earlier turn reached the model');
    assert.equal(seen.chat, 'hello chat');
    assert.equal(seen.error.status, 404);
    assert.match(seen.error.message, /no-such-agent/);
  });
});
