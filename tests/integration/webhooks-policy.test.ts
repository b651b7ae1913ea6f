// The webhook retry policy and its settings, without a store: the default
// schedule spans about three days in 15 attempts, each delay is jittered within
// ±20 %, a Retry-After is read as seconds or a date and capped at a day, and
// PALAI_WEBHOOK_* are parsed and refused like every other setting.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryAfterMs, scheduledDelayMs } from '../../adapters/webhooks/retry-policy.js';
import { ConfigError, loadConfig } from '../../core/config.js';
import { random, testSeed } from '../support/seeded-random.js';

const SEED = testSeed();

test('the default schedule: seconds, then minutes, then hours; 15 attempts over about 3 days', () => {
  const schedule = loadConfig({}).webhookRetryScheduleMs;
  assert.equal(schedule.length + 1, 15);
  assert.equal(schedule[0], 5000);
  const hours = schedule.reduce((a, b) => a + b, 0) / 3_600_000;
  assert.ok(hours > 60 && hours < 80, `${hours} h`);
  assert.ok(
    schedule.every((d, i) => i === 0 || d >= schedule[i - 1]),
    'never shorter than the one before',
  );
});

test('each delay is drawn within ±20 % of the schedule; past its end there is none', () => {
  const draw = random(SEED);
  const delays = Array.from({ length: 500 }, () => scheduledDelayMs([10_000], 1, draw)!);
  assert.ok(delays.every((d) => d >= 8000 && d <= 12_000));
  assert.ok(Math.min(...delays) < 8400 && Math.max(...delays) > 11_600, 'draws spread over the range');
  assert.equal(scheduledDelayMs([10_000], 2), null);
});

test('Retry-After: seconds or an HTTP date, capped at a day; unreadable is ignored', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.equal(retryAfterMs('120', now), 120_000);
  assert.equal(retryAfterMs('Wed, 01 Jan 2025 00:01:00 GMT', now), 60_000);
  assert.equal(retryAfterMs('99999999', now), 24 * 3600 * 1000);
  assert.equal(retryAfterMs('soon', now), undefined);
  assert.equal(retryAfterMs(null, now), undefined);
});

test('PALAI_WEBHOOK_* settings are read, and bad values refused with their name', () => {
  const config = loadConfig({
    PALAI_WEBHOOK_TIMEOUT_SECONDS: '5',
    PALAI_WEBHOOK_RETRY_SCHEDULE: '500ms, 2s,1m,1h,1d',
    PALAI_WEBHOOK_DISABLE_AFTER_SECONDS: '60',
    PALAI_WEBHOOK_CONCURRENCY: '16',
  });
  assert.deepEqual(
    [config.webhookTimeoutSeconds, config.webhookRetryScheduleMs, config.webhookDisableAfterSeconds, config.webhookConcurrency],
    [5, [500, 2000, 60_000, 3_600_000, 86_400_000], 60, 16],
  );
  assert.throws(
    () => loadConfig({ PALAI_WEBHOOK_RETRY_SCHEDULE: '5s,soon' }),
    (e) => e instanceof ConfigError && /PALAI_WEBHOOK_RETRY_SCHEDULE/.test(e.message),
  );
  assert.throws(() => loadConfig({ PALAI_WEBHOOK_TIMEOUT_SECONDS: '0' }), /PALAI_WEBHOOK_TIMEOUT_SECONDS/);
  assert.throws(() => loadConfig({ PALAI_WEBHOOK_CONCURRENCY: 'many' }), /PALAI_WEBHOOK_CONCURRENCY/);
});
