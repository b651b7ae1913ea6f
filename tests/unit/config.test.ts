// The request body limit: 10 MiB unless PALAI_MAX_BODY_BYTES says otherwise.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../core/config.js';

test('the request body limit defaults to 10 MiB', () => {
  assert.equal(loadConfig({}).maxBodyBytes, 10 * 1024 * 1024);
});

test('PALAI_MAX_BODY_BYTES sets the request body limit', () => {
  assert.equal(loadConfig({ PALAI_MAX_BODY_BYTES: '2048' }).maxBodyBytes, 2048);
  assert.equal(loadConfig({ PALAI_MAX_BODY_BYTES: '' }).maxBodyBytes, 10 * 1024 * 1024);
});

test('a body limit that is not a positive integer is a configuration error naming the variable', () => {
  for (const value of ['0', '-1', '1.5', 'ten', '10MiB']) {
    assert.throws(() => loadConfig({ PALAI_MAX_BODY_BYTES: value }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match((error as Error).message, /PALAI_MAX_BODY_BYTES/);
      return true;
    }, value);
  }
});
