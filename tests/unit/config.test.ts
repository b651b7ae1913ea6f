// Configuration bounds: the request body limit (10 MiB unless PALAI_MAX_BODY_BYTES says otherwise) and the port.
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

test('PORT is a TCP port: 0 to 65535, and anything above is a configuration error saying the range', () => {
  assert.equal(loadConfig({}).port, 8080);
  assert.equal(loadConfig({ PORT: '0' }).port, 0);
  assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
  for (const value of ['65536', '100000', '-1', '80.5', 'http']) {
    assert.throws(() => loadConfig({ PORT: value }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal((error as Error).message, `PORT must be an integer from 0 to 65535, got ${JSON.stringify(value)}`);
      return true;
    }, value);
  }
});

test('the listener binds 127.0.0.1 unless HOST (or PALAI_HOST) says otherwise; HOST wins', () => {
  assert.equal(loadConfig({}).host, '127.0.0.1');
  assert.equal(loadConfig({ HOST: '0.0.0.0' }).host, '0.0.0.0');
  assert.equal(loadConfig({ PALAI_HOST: '::' }).host, '::');
  assert.equal(loadConfig({ HOST: '10.1.2.3', PALAI_HOST: '::' }).host, '10.1.2.3');
});

test('PALAI_ADMIN_PORT is off by default and a TCP port when set', () => {
  assert.equal(loadConfig({}).adminPort, null);
  assert.equal(loadConfig({ PALAI_ADMIN_PORT: '' }).adminPort, null);
  assert.equal(loadConfig({ PALAI_ADMIN_PORT: '9090' }).adminPort, 9090);
  assert.throws(() => loadConfig({ PALAI_ADMIN_PORT: '70000' }), /PALAI_ADMIN_PORT must be an integer from 0 to 65535/);
});

test('PALAI_SHUTDOWN_GRACE_SECONDS defaults to 20 and takes 0 to 3600', () => {
  assert.equal(loadConfig({}).shutdownGraceSeconds, 20);
  assert.equal(loadConfig({ PALAI_SHUTDOWN_GRACE_SECONDS: '0' }).shutdownGraceSeconds, 0);
  for (const value of ['-1', '3601', 'soon']) assert.throws(() => loadConfig({ PALAI_SHUTDOWN_GRACE_SECONDS: value }), ConfigError, value);
});
