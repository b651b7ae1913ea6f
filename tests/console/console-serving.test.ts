// How the hub serves the console's files (no browser): under /console with the
// strict policy headers on every answer, /console sent to /console/, hashed
// assets cached for good and index.html revalidated, reads only, a problem for
// a file it does not have or a console not built, and nothing at all with
// PALAI_CONSOLE=false.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import express from 'express';
import request from 'supertest';
import { consoleFiles } from '../../adapters/console/files.js';
import { CONSOLE_CSP, consoleRouter } from '../../adapters/console/static.js';
import { handleError } from '../../adapters/http/problem.js';
import { createLogger } from '../../core/logger.js';
import { describeEachStore } from '../support/hub.js';

const dir = consoleFiles();

await describeEachStore(
  'the console served by the hub',
  (ctx) => {
    test('the page and its assets, under the policy headers; /console goes to /console/', async () => {
      assert.ok(dir, 'the console is built (npm ci and npm test build it)');
      const http = request(ctx().hub.app);
      const redirect = await http.get('/console');
      assert.equal(redirect.status, 301);
      assert.equal(redirect.headers.location, '/console/');

      const page = await http.get('/console/');
      assert.equal(page.status, 200);
      assert.match(page.headers['content-type'], /^text\/html/);
      assert.equal(page.headers['content-security-policy'], CONSOLE_CSP);
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.equal(page.headers['cache-control'], 'no-cache');

      const script = /<script[^>]*\bsrc="([^"]+)"/.exec(page.text)?.[1];
      assert.ok(script?.startsWith('/console/assets/'), `the page loads its script from /console/assets/: ${script}`);
      const asset = await http.get(script!);
      assert.equal(asset.status, 200);
      assert.match(asset.headers['content-type'], /javascript/);
      assert.match(asset.headers['cache-control'], /max-age=31536000/);
      assert.match(asset.headers['cache-control'], /immutable/);
      assert.equal(asset.headers['content-security-policy'], CONSOLE_CSP);
      for (const file of readdirSync(join(dir, 'assets'))) assert.doesNotMatch(file, /\.map$/, 'no source maps are served');
    });

    test('reads only; an unknown file is a 404 problem under the same headers', async () => {
      const http = request(ctx().hub.app);
      const post = await http.post('/console/').send({});
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');
      const missing = await http.get('/console/assets/nothing-here.js');
      assert.equal(missing.status, 404);
      assert.match(missing.headers['content-type'], /^application\/problem\+json/);
      assert.equal(missing.headers['content-security-policy'], CONSOLE_CSP);
      const traversal = await http.get('/console/..%2f..%2fpackage.json');
      assert.ok([400, 403, 404].includes(traversal.status), `no file outside the console: ${traversal.status}`);
      assert.doesNotMatch(traversal.text, /"name": "palai"/);
    });
  },
  {},
  { stores: ['pglite'] },
);

await describeEachStore(
  'PALAI_CONSOLE=false',
  (ctx) => {
    test('leaves /console out: the REST fallback answers 404', async () => {
      const page = await request(ctx().hub.app).get('/console/');
      assert.equal(page.status, 404);
      assert.equal(page.headers['content-security-policy'], undefined);
    });
  },
  { console: false },
  { stores: ['pglite'] },
);

test('a console that was not built answers a problem saying how to build it', async () => {
  const app = express();
  app.use('/console', consoleRouter(null));
  app.use(handleError(createLogger('silent')));
  const page = await request(app).get('/console/');
  assert.equal(page.status, 404);
  assert.match(page.body.detail, /npm run build:console/);
});
