// Configuration bounds: the request body limit (10 MiB unless PALAI_MAX_BODY_BYTES says otherwise), the port,
// and what every other setting accepts: a bad value stops the start with one line naming the variable.
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
    assert.throws(
      () => loadConfig({ PALAI_MAX_BODY_BYTES: value }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match((error as Error).message, /PALAI_MAX_BODY_BYTES/);
        return true;
      },
      value,
    );
  }
});

test('PORT is a TCP port: 0 to 65535, and anything above is a configuration error saying the range', () => {
  assert.equal(loadConfig({}).port, 8080);
  assert.equal(loadConfig({ PORT: '0' }).port, 0);
  assert.equal(loadConfig({ PORT: '65535' }).port, 65535);
  for (const value of ['65536', '100000', '-1', '80.5', 'http']) {
    assert.throws(
      () => loadConfig({ PORT: value }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal((error as Error).message, `PORT must be an integer from 0 to 65535, got ${JSON.stringify(value)}`);
        return true;
      },
      value,
    );
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

/** The message a bad value stops the start with (the CLI prints it after "palai: Invalid configuration: "). */
function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail(`loadConfig accepted ${JSON.stringify(env)}`);
}

test('every setting the loader reads refuses a bad value with one line that starts with its name', () => {
  const bad: Record<string, string> = {
    PORT: 'http',
    HOST: 'http://example.com',
    PALAI_HOST: 'host name with spaces',
    PALAI_ADMIN_PORT: 'admin',
    PALAI_SHUTDOWN_GRACE_SECONDS: '1h',
    PALAI_DATABASE_URL: 'notaurl',
    PALAI_DATABASE_PREPARED_STATEMENTS: 'sometimes',
    PALAI_CONSOLE: 'maybe',
    PALAI_RETENTION_COMPACT_AFTER: 'soon',
    PALAI_RETENTION_DELETE_AFTER: '0s',
    PALAI_MAX_BODY_BYTES: '10MiB',
    PALAI_LOG_LEVEL: 'loud',
    PALAI_LEASE_SECONDS: '30s',
    PALAI_POLL_INTERVAL_MS: '1e3',
    PALAI_WORKER_CONCURRENCY: '0',
    PALAI_SYNC_WAIT_SECONDS: '-5',
    PALAI_EGRESS_ALLOW_HOSTS: 'http://10.0.0.5/',
    PALAI_KEY_ENV_ALLOWLIST: 'MY KEY',
    OPENAI_BASE_URL: 'api.openai.com',
    ANTHROPIC_BASE_URL: 'ftp://anthropic.example',
    PALAI_MODEL_MAX_RETRIES: '21',
    PALAI_MODEL_RETRY_BASE_MS: '0x10',
    PALAI_MODEL_TIMEOUT_SECONDS: '2147484',
    PALAI_NODE_LEDGER_RETENTION_HOURS: '0',
    PALAI_IDEMPOTENCY_RETENTION_HOURS: '1.5',
    PALAI_WEBHOOK_TIMEOUT_SECONDS: '51',
    PALAI_WEBHOOK_RETRY_SCHEDULE: '5s,soon',
    PALAI_WEBHOOK_DISABLE_AFTER_SECONDS: 'never',
    PALAI_WEBHOOK_CONCURRENCY: '1001',
    PALAI_QUEUE_MAX_BACKLOG: '99999999999999999999',
    PALAI_MIN_SCHEDULE_SECONDS: '0',
    PALAI_SCHEDULER_INTERVAL_MS: '10',
    PALAI_SCHEDULE_GRACE_SECONDS: '1 day',
  };
  // Read through a proxy: a setting added to the loader without a row here fails this test.
  const read = new Set<string>();
  loadConfig(new Proxy({}, { get: (_, name) => void read.add(String(name)) }));
  // Any text: PALAI_MCP_STDIO_SERVERS_FILE is a path the MCP wing reads and checks at start (tests/mcp/client-config.test.ts).
  const anyText = ['PALAI_HOME', 'PALAI_BOOTSTRAP_API_KEY', 'PALAI_SECRET_KEY', 'PALAI_MCP_STDIO_SERVERS_FILE'];
  assert.deepEqual([...read].filter((name) => !anyText.includes(name)).sort(), Object.keys(bad).sort());
  for (const [name, value] of Object.entries(bad)) {
    const message = configError({ [name]: value });
    assert.ok(message.startsWith(name), `${name}=${value}: ${message}`);
    assert.doesNotMatch(message, /\n/, `${name}: one line`);
  }
});

test('PALAI_LOG_LEVEL is one of pino levels, in any case, and anything else says which it may be', () => {
  assert.equal(loadConfig({}).logLevel, 'info');
  for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) assert.equal(loadConfig({ PALAI_LOG_LEVEL: level }).logLevel, level);
  assert.equal(loadConfig({ PALAI_LOG_LEVEL: 'DEBUG' }).logLevel, 'debug');
  assert.equal(configError({ PALAI_LOG_LEVEL: 'loud' }), 'PALAI_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');
});

test('PALAI_DATABASE_URL is a postgres:// URL; anything else is refused without echoing the value, which holds the password', () => {
  assert.equal(loadConfig({}).databaseUrl, null);
  for (const url of ['postgres://palai:pw@db:5432/palai', 'postgresql://palai@[::1]/palai', 'postgres:///palai?host=/var/run/postgresql']) {
    assert.equal(loadConfig({ PALAI_DATABASE_URL: url }).databaseUrl, url);
  }
  assert.match(
    configError({ PALAI_DATABASE_URL: 'notaurl' }),
    /^PALAI_DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL .*, got a value that is not a URL$/,
  );
  const mysql = configError({ PALAI_DATABASE_URL: 'mysql://palai:topsecret@db/palai' });
  assert.match(mysql, /, got a mysql: URL$/);
  assert.ok(!mysql.includes('topsecret'), mysql);
  assert.ok(!configError({ PALAI_DATABASE_URL: 'palai:topsecret@db/palai' }).includes('topsecret'));
});

test('HOST and PALAI_HOST take an IP address or a host name, and a bad one is named by the variable it came from', () => {
  for (const host of ['0.0.0.0', '::', 'fd00::1', 'localhost', 'palai.internal', 'my_service']) assert.equal(loadConfig({ HOST: host }).host, host);
  assert.equal(configError({ HOST: '10.0.0.1:8080' }), 'HOST must be an IP address or a host name (the port is PORT), got "10.0.0.1:8080"');
  assert.match(configError({ PALAI_HOST: '[::1]' }), /^PALAI_HOST must be an IP address or a host name/);
});

test('PALAI_EGRESS_ALLOW_HOSTS takes host names, IP literals (IPv6 with or without brackets) and CIDR blocks; a URL, a port or a bad block is refused', () => {
  assert.deepEqual(loadConfig({ PALAI_EGRESS_ALLOW_HOSTS: ' kafka, 127.0.0.1 ,[::1],fd00::/8,10.1.0.0/16,' }).egressAllowHosts, [
    'kafka',
    '127.0.0.1',
    '[::1]',
    'fd00::/8',
    '10.1.0.0/16',
  ]);
  for (const entry of ['http://10.0.0.5/', '127.0.0.1:8000', '10.0.0.0/33', 'not a host']) {
    assert.equal(
      configError({ PALAI_EGRESS_ALLOW_HOSTS: `kafka,${entry}` }),
      `PALAI_EGRESS_ALLOW_HOSTS entry ${JSON.stringify(entry)} must be a host name, an IP address or a CIDR block such as 10.1.0.0/16`,
    );
  }
});

test('an integer setting takes decimal digits only, and a timer setting no more than a timer holds', () => {
  assert.equal(loadConfig({ PALAI_WORKER_CONCURRENCY: ' 8 ' }).workerConcurrency, 8);
  for (const value of ['1e3', '0x10', '1.0', '9007199254740993']) {
    assert.match(configError({ PALAI_WORKER_CONCURRENCY: value }), /^PALAI_WORKER_CONCURRENCY must be an integer ≥ 1, got /, value);
  }
  assert.equal(loadConfig({ PALAI_POLL_INTERVAL_MS: '2147483647' }).pollIntervalMs, 2_147_483_647);
  assert.equal(configError({ PALAI_POLL_INTERVAL_MS: '2147483648' }), 'PALAI_POLL_INTERVAL_MS must be an integer from 10 to 2147483647, got "2147483648"');
  assert.match(configError({ PALAI_SYNC_WAIT_SECONDS: '2147484' }), /^PALAI_SYNC_WAIT_SECONDS must be an integer from 1 to 2147483, got/);
});
