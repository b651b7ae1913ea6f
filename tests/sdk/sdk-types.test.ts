// The SDK's types are the document's: `tsc` accepts a program that uses the
// client as documented and refuses one that misuses a field, naming each line.
// The programs are written to a temporary directory and type-checked there as
// a user's would be (strict, browser libraries, no Node types).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const sdk = join(root, 'sdk/src/index.js');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const correct = `import { createPalai, PalaiApiError } from ${JSON.stringify(sdk)};
const palai = createPalai({ baseUrl: 'http://localhost:8080', apiKey: 'palai_sk_x' });
const agent = await palai.POST('/v1/agents', { body: { name: 'a', model: { provider: 'fake' } } });
const name: string = agent.name;
const page = await palai.GET('/v1/responses', { params: { query: { agent: name, status: 'completed', limit: 10 } } });
for (const response of page.data) console.log(response.palai_status, response.output_text);
for await (const event of palai.responses.stream({ model: 'a', input: 'hi' })) {
  if (event.type === 'response.output_text.delta') console.log(event.delta);
}
try {
  await palai.POST('/v1/responses/{response_id}/approvals', { params: { path: { response_id: 'resp_1' } }, body: { call_id: 'c', decision: 'deny' } });
} catch (error) {
  if (error instanceof PalaiApiError) console.log(error.slug, error.status, error.errors, error.error?.code);
}
`;

// Each misuse is on its own line; the test expects an error on exactly these lines.
const misuses = [
  `await palai.POST('/v1/agents', { body: { name: 'a', model: { provider: 'fake' }, colour: 'red' } });`,
  `await palai.POST('/v1/agents', { body: { name: 'a' } });`,
  `await palai.GET('/v1/responses', { params: { query: { status: 'finished' } } });`,
  `await palai.POST('/v1/responses/{response_id}/approvals', { params: { path: { response_id: 'r' } }, body: { call_id: 'c', decision: 'maybe' } });`,
  `const n: number = (await palai.GET('/v1/agents/{agent}', { params: { path: { agent: 'a' } } })).name;`,
  `await palai.GET('/v1/agent', {});`,
];
const misuse = `import { createPalai } from ${JSON.stringify(sdk)};
const palai = createPalai({ baseUrl: 'http://localhost:8080', apiKey: 'palai_sk_x' });
${misuses.join('\n')}
`;

test('tsc accepts the documented use of the client and refuses each misused field, on its line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'palai-sdk-types-'));
  try {
    writeFileSync(join(dir, 'correct.mts'), correct);
    writeFileSync(join(dir, 'misuse.mts'), misuse);
    const compilerOptions = {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['correct.mts', 'misuse.mts'] }));
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) =>
      execFile(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], { cwd: dir }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      ),
    );
    assert.notEqual(code, 0, 'the misuses fail tsc');
    const errors = output.split('\n').filter((line) => /error TS\d+/.test(line));
    assert.deepEqual(
      errors.filter((line) => !line.startsWith('misuse.mts')),
      [],
      'the documented use compiles, and so does the SDK itself with browser libraries and no Node types',
    );
    const lines = new Set(
      errors
        .map((line) => /^misuse\.mts\((\d+),/.exec(line)?.[1])
        .filter(Boolean)
        .map(Number),
    );
    assert.deepEqual(
      [...lines].sort((a, b) => a - b),
      misuses.map((_, i) => i + 3),
      `every misuse, and only those, is an error:\n${errors.join('\n')}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
