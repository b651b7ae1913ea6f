// Which database errors mean "not now" (retry, hand the run over, answer 503)
// and which mean "no" (a bug or a bad statement, answered as such).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isTransientStoreError, StoreUnavailableError } from '../../core/store/transient.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('connection losses, server shutdowns and lost serialization races are outages', () => {
  for (const error of [
    withCode('ECONNRESET'),
    withCode('ECONNREFUSED'),
    withCode('EPIPE'),
    withCode('08006', 'connection failure'),
    withCode('08003'),
    withCode('57P01', 'terminating connection due to administrator command'),
    withCode('57P03', 'the database system is starting up'),
    withCode('40001', 'could not serialize access'),
    withCode('40P01', 'deadlock detected'),
    withCode('53300', 'too many connections'),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Client has encountered a connection error and is not queryable'),
    new StoreUnavailableError(new Error('anything')),
    new Error('wrapped', { cause: withCode('ECONNRESET') }),
    new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], ''),
  ]) {
    assert.ok(isTransientStoreError(error), `${(error as Error).message} ${(error as { code?: string }).code ?? ''}`);
  }
});

test('answers about the statement or the data are not outages', () => {
  for (const error of [
    withCode('23505', 'duplicate key value violates unique constraint'),
    withCode('22P02', 'invalid input syntax'),
    withCode('42P01', 'relation does not exist'),
    withCode('22021', 'invalid byte sequence'),
    withCode('ENOENT'),
    new Error('Connection refused by policy'),
    new TypeError('cannot read properties of undefined'),
    'a string',
    null,
    undefined,
    { code: 12 },
  ]) {
    assert.equal(isTransientStoreError(error), false, String((error as Error | null)?.message ?? error));
  }
});
