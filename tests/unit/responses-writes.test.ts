// Every statement that writes `responses` lives in core/responses/, so what a
// response's row can become is read in one folder. The scan reads SQL as text:
// first on fixtures, where each way of writing the table is found on its line
// and reads and comments are not, then on core/, which must have none elsewhere.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** Where the statements belong. */
const HOME = 'core/responses/';

const WRITE = /\b(?:UPDATE(?:\s+ONLY)?|INSERT\s+INTO|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|MERGE\s+INTO)\s+(?:"?public"?\s*\.\s*)?"?responses"?(?![\w"])/gi;

interface Write {
  line: number;
  statement: string;
}

/** The writes of `responses` in a source text, with their lines; a match on a comment line is not one. */
function responsesWrites(source: string): Write[] {
  const found: Write[] = [];
  for (const match of source.matchAll(WRITE)) {
    const lineStart = source.lastIndexOf('\n', match.index) + 1;
    const before = source.slice(lineStart, match.index);
    if (/^\s*(?:\/\/|\/?\*)/.test(before) || before.includes('//')) continue;
    found.push({ line: source.slice(0, match.index).split('\n').length, statement: match[0].replace(/\s+/g, ' ') });
  }
  return found;
}

function tsFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('the scan finds each way of writing responses on its line, and passes over reads and comments', () => {
  const fixture = [
    "await db.query('UPDATE responses SET output = $2 WHERE id = $1');", // 1
    '`WITH moved AS (UPDATE responses r SET status = $2', // 2
    '   RETURNING r.id) SELECT 1`;', // 3
    "tx.query('insert into responses (id) values ($1)');", // 4
    'const sql = `DELETE FROM', // 5
    '   responses WHERE id = $1`;', // 6
    "q('TRUNCATE responses'); q('UPDATE ONLY public.responses SET x = 1'); q('MERGE INTO \"responses\" USING t ON true');", // 7
    "q('SELECT * FROM responses WHERE id = $1 FOR UPDATE');", // 8: a read, with a lock
    "q('UPDATE responses_archive SET x = 1'); q('INSERT INTO response_events (x) VALUES (1)');", // 9: other tables
    '// A comment may say: UPDATE responses SET status.', // 10
    ' * and so may a doc comment: DELETE FROM responses.', // 11
    "q('SELECT 1'); // then UPDATE responses, later", // 12
  ].join('\n');
  assert.deepEqual(responsesWrites(fixture), [
    { line: 1, statement: 'UPDATE responses' },
    { line: 2, statement: 'UPDATE responses' },
    { line: 4, statement: 'insert into responses' },
    { line: 5, statement: 'DELETE FROM responses' },
    { line: 7, statement: 'TRUNCATE responses' },
    { line: 7, statement: 'UPDATE ONLY public.responses' },
    { line: 7, statement: 'MERGE INTO "responses"' },
  ]);
});

test(`no file in core/ outside ${HOME} writes responses`, () => {
  const files = tsFiles('core').filter((file) => !file.startsWith(HOME));
  assert.ok(files.length > 50, `only ${files.length} files scanned: is the tree where the test expects it?`);
  const writes = files.flatMap((file) => responsesWrites(readFileSync(join(repoRoot, file), 'utf8')).map((w) => `${file}:${w.line} ${w.statement}`));
  assert.deepEqual(writes, [], `statements that write responses outside ${HOME} (move each into a named function there):\n${writes.join('\n')}`);
});
