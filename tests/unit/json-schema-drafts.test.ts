// One module compiles every caller's JSON Schema under the draft its `$schema`
// names: which draft each URI spelling picks, what is refused and how, and that
// compiled validators are shared by text and keep working as compilers retire.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPalaiError } from '../../core/errors/palai-error.js';
import { compileSchema, compileUserSchema, draftOf, schemaFieldError } from '../../core/schemas/json-schema-drafts.js';

test('each spelling of a known $schema picks its draft; none is 2020-12; anything else is unknown', () => {
  const spellings: Array<[unknown, string | null]> = [
    [undefined, '2020-12'],
    ['http://json-schema.org/draft-04/schema#', 'draft-04'],
    ['http://json-schema.org/draft-06/schema', 'draft-06'],
    ['http://json-schema.org/draft-07/schema#', 'draft-07'],
    ['https://json-schema.org/draft-07/schema', 'draft-07'],
    ['https://json-schema.org/draft/2019-09/schema', '2019-09'],
    ['https://json-schema.org/draft/2020-12/schema#', '2020-12'],
    ['http://json-schema.org/draft-03/schema#', null],
    ['https://example.com/schema', null],
    [7, null],
  ];
  for (const [uri, draft] of spellings) {
    assert.equal(draftOf(uri === undefined ? {} : { $schema: uri }), draft, String(uri));
  }
});

test('a schema is validated under its draft: the https spelling of draft-07 reads tuple items as draft-07 does', () => {
  const compiled = compileSchema({ $schema: 'https://json-schema.org/draft-07/schema', type: 'array', items: [{ type: 'string' }], additionalItems: false });
  assert.ok('validate' in compiled, JSON.stringify(compiled));
  assert.equal(compiled.draft, 'draft-07');
  assert.equal(compiled.validate(['a']), true);
  assert.equal(compiled.validate(['a', 'b']), false);
});

test('an unusable schema names its pointer, as a field error or a validation-failed error', () => {
  assert.deepEqual(schemaFieldError({ type: 'object' }, '/x'), null);
  assert.deepEqual(schemaFieldError([], '/x'), { pointer: '/x', detail: 'is not a JSON Schema object' });
  assert.match(
    schemaFieldError({ $schema: 'urn:mine' }, '/x')?.detail ?? '',
    /\$schema Palai does not know, "urn:mine" \(known drafts: draft-04, draft-06, draft-07, 2019-09, 2020-12\)/,
  );
  assert.throws(
    () => compileUserSchema({ type: 'object', properties: { a: { $ref: '#/$defs/none' } } }, '/text/format/schema'),
    (error: unknown) => {
      assert.ok(isPalaiError(error));
      assert.equal(error.slug, 'validation-failed');
      assert.deepEqual(
        error.errors?.map((e) => e.pointer),
        ['/text/format/schema'],
      );
      assert.match(error.errors?.[0].detail ?? '', /^is not a usable JSON Schema \(2020-12\): can't resolve reference #\/\$defs\/none/);
      return true;
    },
  );
  // The meta-schema's alternatives repeat one complaint; it is said once.
  const detail = schemaFieldError({ type: 'object', properties: { a: 1 } }, '/x')?.detail ?? '';
  assert.equal(detail.split('data/properties/a must be object,boolean').length, 2, detail);
});

test('the same schema, its keys in another order, is compiled once; two schemas with one $id do not collide', () => {
  const first = compileSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
  const again = compileSchema({ required: ['a'], properties: { a: { type: 'string' } }, type: 'object' });
  assert.ok('validate' in first && 'validate' in again);
  assert.equal(again.validate, first.validate);
  const one = compileSchema({ $id: 'https://example.com/s', type: 'string' });
  const other = compileSchema({ $id: 'https://example.com/s', type: 'number' });
  assert.ok('validate' in one && 'validate' in other, JSON.stringify(other));
  assert.equal(one.validate('x'), true);
  assert.equal(other.validate('x'), false);
});

test('validators keep working after the compiler that made them retires, across many distinct schemas', () => {
  const early = compileSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'integer', maximum: 0 });
  assert.ok('validate' in early);
  for (let i = 1; i <= 1200; i++) {
    const compiled = compileSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'integer', maximum: i });
    assert.ok('validate' in compiled && compiled.validate(i) && !compiled.validate(i + 1), `schema ${i}`);
  }
  assert.equal(early.validate(0), true);
  assert.equal(early.validate(1), false);
});
