// The one cron module: what a schedule accepts, what it refuses (naming the
// field), and the occurrences it gives across DST changes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSchedule, ScheduleError } from '../../core/surfaces/autonomy/cron.js';

const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

function refused(field: 'cron' | 'timezone', pattern: RegExp, cron: string, options?: Parameters<typeof parseSchedule>[1]) {
  assert.throws(
    () => parseSchedule(cron, options),
    (error: unknown) => error instanceof ScheduleError && error.field === field && pattern.test(error.message),
  );
}

test('five fields are minutes, six put seconds first', () => {
  const from = new Date('2026-10-23T00:00:00Z');
  assert.deepEqual(iso(parseSchedule('*/2 * * * * *').between(from, new Date('2026-10-23T00:00:06Z'), 10)), [
    '2026-10-23T00:00:02.000Z',
    '2026-10-23T00:00:04.000Z',
    '2026-10-23T00:00:06.000Z',
  ]);
  assert.equal(parseSchedule('0 9 * * 1-5', { timezone: 'Europe/Paris' }).nextAfter(from)?.toISOString(), '2026-10-23T07:00:00.000Z');
});

test('between stops at its limit and includes its upper bound only', () => {
  const schedule = parseSchedule('* * * * *');
  const from = new Date('2026-01-01T00:00:00Z');
  assert.equal(schedule.between(from, new Date('2026-01-01T01:00:00Z'), 3).length, 3);
  assert.equal(schedule.between(from, new Date('2026-01-01T00:59:59Z'), 100).length, 59);
});

test('a local time a DST change skips gives one occurrence, and a repeated one gives one', () => {
  const daily = parseSchedule('30 2 * * *', { timezone: 'Europe/Paris' });
  const spring = daily.between(new Date('2026-03-28T12:00:00Z'), new Date('2026-03-30T12:00:00Z'), 10);
  assert.deepEqual(iso(spring), ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
  const autumn = daily.between(new Date('2026-10-24T12:00:00Z'), new Date('2026-10-26T12:00:00Z'), 10);
  assert.deepEqual(iso(autumn), ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
});

test('bad expressions and time zones are refused naming the field', () => {
  refused('cron', /minute/, '61 * * * *');
  refused('cron', /five fields, or six/, '* * * *');
  refused('cron', /five fields, or six/, '0 0 0 1 1 * 2030');
  refused('cron', /not a cron expression/, 'every day at noon today');
  refused('timezone', /IANA/, '* * * * *', { timezone: 'Mars/Olympus' });
  refused('timezone', /IANA/, '* * * * *', { timezone: '' });
});

test('an interval below the minimum is refused, the minimum itself is accepted', () => {
  refused('cron', /every 1 s; the shortest interval allowed is 60 s/, '* * * * * *', { minIntervalSeconds: 60 });
  refused('cron', /every 60 s/, '0,1 * * * *', { minIntervalSeconds: 120 });
  assert.equal(parseSchedule('* * * * *', { minIntervalSeconds: 60 }).cron, '* * * * *');
  assert.equal(parseSchedule('*/2 * * * * *', { minIntervalSeconds: 1 }).cron, '*/2 * * * * *');
});
