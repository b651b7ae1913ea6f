// The one problem vocabulary: a registry of stable slugs and their meaning in
// core, free of any transport, mapped once to RFC 9457 problem+json for HTTP.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { HTTP_STATUS, httpStatusOf, openAiParam, problemBody, toPalaiError } from '../../adapters/http/problem.js';
import { matchesSchema } from '../../adapters/http/validation.js';
import { isOutage, retryOf, PalaiError, isPalaiError, notFound } from '../../core/errors/palai-error.js';
import { OUTAGE_SLUGS, PROBLEM_TYPE_PREFIX, problemTypeUri, problemTypes, type ProblemSlug } from '../../core/errors/problem-types.js';

const slugs = Object.keys(problemTypes) as ProblemSlug[];
const coreErrorsDir = new URL('../../core/errors/', import.meta.url);

test('slugs are lowercase kebab-case words and their type URIs are unique', () => {
  for (const slug of slugs) assert.match(slug, /^[a-z]+(-[a-z]+)*$/, slug);
  assert.equal(new Set(slugs.map(problemTypeUri)).size, slugs.length);
});

test('every problem type has a title and a one-line meaning', () => {
  for (const slug of slugs) {
    const { title, meaning } = problemTypes[slug];
    assert.ok(title.trim().length > 0, slug);
    assert.ok(meaning.trim().length > 0 && !meaning.includes('\n'), slug);
  }
});

test('core/errors knows no HTTP: registry entries hold a title, a meaning and whether a retry helps, and no status number appears', () => {
  for (const slug of slugs) {
    const keys = Object.keys(problemTypes[slug]).sort();
    assert.deepEqual(keys, OUTAGE_SLUGS.has(slug) ? ['meaning', 'outage', 'retry', 'title'] : ['meaning', 'retry', 'title'], slug);
  }
  assert.ok(!('status' in new PalaiError('conflict')), 'a PalaiError carries no status');
  for (const name of readdirSync(coreErrorsDir).filter((n) => n.endsWith('.ts'))) {
    const source = readFileSync(new URL(name, coreErrorsDir), 'utf8');
    assert.doesNotMatch(source, /\bstatus\b/i, `core/errors/${name} mentions a status`);
    assert.doesNotMatch(source, /\b[1-5]\d\d\b/, `core/errors/${name} holds what looks like an HTTP status number`);
  }
});

test('each problem says whether a retry can help, and one predicate reads it for any error', () => {
  for (const slug of slugs) assert.ok(['never', 'after-change', 'later'].includes(problemTypes[slug].retry), slug);
  // An outage of Palai's own always passes; a malformed request never does.
  for (const slug of OUTAGE_SLUGS) assert.equal(problemTypes[slug].retry, 'later', slug);
  assert.deepEqual([...OUTAGE_SLUGS].sort(), ['not-ready', 'shutting-down', 'store-busy', 'store-unavailable']);
  assert.equal(retryOf(new PalaiError('validation-failed')), 'never');
  assert.equal(retryOf(new PalaiError('agent-not-found')), 'after-change');
  assert.equal(retryOf(new PalaiError('store-unavailable')), 'later');
  assert.equal(retryOf(new Error('something unexpected')), 'later', 'an unexpected error is internal, which may pass');
  assert.equal(isOutage(new PalaiError('store-busy')), true);
  assert.equal(isOutage(new PalaiError('internal')), false);
  assert.equal(isOutage(new Error('Connection terminated unexpectedly')), false, 'a raw driver error never leaves the kernel API');
});

test('the HTTP table gives every slug, and only registry slugs, a 4xx or 5xx status', () => {
  assert.deepEqual(Object.keys(HTTP_STATUS).sort(), [...slugs].sort());
  for (const slug of slugs) {
    const status = httpStatusOf(slug);
    assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${slug}: ${status}`);
  }
});

test('the HTTP table holds the statuses clients branch on', () => {
  const expected: Record<ProblemSlug, number> = {
    'malformed-json': 400,
    'validation-failed': 400,
    'invalid-request': 400,
    unauthorized: 401,
    forbidden: 403,
    'egress-denied': 403,
    'not-found': 404,
    'agent-not-found': 404,
    'method-not-allowed': 405,
    'not-acceptable': 406,
    'request-timeout': 408,
    conflict: 409,
    'invalid-state': 409,
    'policy-hash-mismatch': 409,
    'payload-too-large': 413,
    'unsupported-media-type': 415,
    'idempotency-conflict': 422,
    'limit-exceeded': 422,
    'output-invalid': 422,
    'headers-too-large': 431,
    internal: 500,
    'model-provider-error': 502,
    'upstream-unavailable': 502,
    'not-ready': 503,
    'store-busy': 503,
    'store-unavailable': 503,
    'shutting-down': 503,
  };
  for (const slug of slugs) assert.equal(httpStatusOf(slug), expected[slug], slug);
});

test('a problem type URI is the stable urn:palai:problem: prefix followed by the slug', () => {
  assert.equal(PROBLEM_TYPE_PREFIX, 'urn:palai:problem:');
  assert.equal(problemTypeUri('validation-failed'), 'urn:palai:problem:validation-failed');
  for (const slug of slugs) assert.equal(problemTypeUri(slug), `urn:palai:problem:${slug}`);
});

test('a PalaiError takes its title from the registry; its detail defaults to the title', () => {
  const plain = new PalaiError('conflict');
  assert.equal(plain.title, problemTypes.conflict.title);
  assert.equal(plain.message, problemTypes.conflict.title);
  assert.equal(plain.slug, 'conflict');
  assert.ok(plain instanceof Error);
  assert.ok(isPalaiError(plain));
  assert.ok(!isPalaiError(new Error('x')));
  assert.equal(new PalaiError('conflict', 'name taken').message, 'name taken');
});

test('problemBody maps a PalaiError to an RFC 9457 body at its HTTP status, with its field errors and the instance', () => {
  const error = new PalaiError('validation-failed', 'The request body does not match the schema.', {
    errors: [{ pointer: '/name', detail: 'must be string' }],
  });
  const body = problemBody(error, '/v1/agents');
  assert.deepEqual(body, {
    type: 'urn:palai:problem:validation-failed',
    title: problemTypes['validation-failed'].title,
    status: 400,
    detail: 'The request body does not match the schema.',
    instance: '/v1/agents',
    errors: [{ pointer: '/name', detail: 'must be string' }],
    error: { message: 'The request body does not match the schema.', type: 'invalid_request_error', code: 'validation-failed', param: 'name' },
  });
  assert.ok(matchesSchema('Problem', body).ok);
});

test('problemBody leaves out errors and instance when there are none', () => {
  const body = problemBody(notFound('session', 'ses_x'));
  assert.deepEqual(Object.keys(body).sort(), ['detail', 'error', 'status', 'title', 'type']);
  assert.deepEqual(body.error, { message: 'No session with id "ses_x" in this project.', type: 'not_found_error', code: 'not-found', param: null });
  assert.equal(body.type, 'urn:palai:problem:not-found');
  assert.equal(body.detail, 'No session with id "ses_x" in this project.');
  assert.ok(matchesSchema('Problem', body).ok);
});

test('extensions become problem members but cannot overwrite the standard ones', () => {
  const error = new PalaiError('method-not-allowed', 'no', { extensions: { allow: 'GET', status: 200, type: 'evil' } });
  const body = problemBody(error);
  assert.equal(body.allow, 'GET');
  assert.equal(body.status, 405);
  assert.equal(body.type, 'urn:palai:problem:method-not-allowed');
});

test("every PalaiError's body matches the Problem schema of the OpenAPI document", () => {
  for (const slug of slugs) {
    const body = problemBody(new PalaiError(slug), '/x');
    const check = matchesSchema('Problem', body);
    assert.ok(check.ok, `${slug}: ${JSON.stringify(check.errors)}`);
  }
});

test("the JSON body parser's failures map to problems; anything else is not a known problem", () => {
  const slugOf = (type: string) => toPalaiError(Object.assign(new Error('parser'), { type }))?.slug;
  assert.equal(slugOf('entity.parse.failed'), 'malformed-json');
  assert.equal(slugOf('entity.too.large'), 'payload-too-large');
  assert.equal(slugOf('charset.unsupported'), 'unsupported-media-type');
  assert.equal(slugOf('encoding.unsupported'), 'unsupported-media-type');
  assert.equal(slugOf('request.aborted'), 'invalid-request');
  assert.equal(slugOf('something.else'), undefined);
  assert.equal(toPalaiError(new Error('boom')), null);
  assert.equal(toPalaiError('a string'), null);
  const known = new PalaiError('forbidden');
  assert.equal(toPalaiError(known), known);
});

test("every problem carries OpenAI's error member: detail as message, slug as code, its family by status", () => {
  for (const slug of slugs) {
    const { error, status } = problemBody(new PalaiError(slug, `about ${slug}`));
    assert.equal((error as { message: string }).message, `about ${slug}`);
    assert.equal((error as { code: string }).code, slug);
    const type = (error as { type: string }).type;
    const expected =
      status >= 500
        ? 'server_error'
        : (({ 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error' } as Record<number, string>)[status] ??
          'invalid_request_error');
    assert.equal(type, expected, slug);
  }
});

test('a field error pointer becomes the parameter in OpenAI notation', () => {
  assert.equal(openAiParam('/model'), 'model');
  assert.equal(openAiParam('/input/0/content'), 'input[0].content');
  assert.equal(openAiParam('/outputs/2/call_id'), 'outputs[2].call_id');
  assert.equal(openAiParam('/query/limit'), 'limit');
  assert.equal(openAiParam('/metadata/a~1b'), 'metadata.a/b');
  assert.equal(openAiParam(''), null);
});
