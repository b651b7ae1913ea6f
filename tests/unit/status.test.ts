// The response status machine, checked pair by pair against the diagram in
// core/responses/status.ts, written out here independently of its table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  TERMINAL_STATUSES,
  TRANSITIONS,
  WAITING_STATUSES,
  canTransition,
  isParked,
  isSettled,
  isSuspended,
  isTerminal,
  isWaiting,
  type ResponseStatus,
} from '../../core/response-status.js';
import { matchesSchema } from '../../adapters/http/validation.js';
import { CLAIMABLE_STATUSES } from '../../core/response-status.js';

const ALL: ResponseStatus[] = [
  'queued',
  'in_progress',
  'completed',
  'failed',
  'canceled',
  'timed_out',
  'budget_exceeded',
  'waiting_for_approval',
  'waiting_for_tool',
  'waiting_for_input',
  'parked',
];
const TERMINAL: ResponseStatus[] = ['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded'];
const WAITING: ResponseStatus[] = ['waiting_for_approval', 'waiting_for_tool', 'waiting_for_input'];
// Waits a caller must act on, and the one for an outside party.
const SUSPENDED: ResponseStatus[] = [...WAITING, 'parked'];

//   queued → in_progress → completed | failed | canceled | timed_out | budget_exceeded
//   in_progress ⇄ waiting_for_approval | waiting_for_tool | waiting_for_input
//   in_progress ⇄ parked
//   any non-terminal state may also end as canceled, failed or timed_out
const EXPECTED = new Set<string>([
  'queued>in_progress',
  ...TERMINAL.map((to) => `in_progress>${to}`),
  ...SUSPENDED.flatMap((w) => [`in_progress>${w}`, `${w}>in_progress`]),
  ...['queued', ...SUSPENDED].flatMap((from) => ['canceled', 'failed', 'timed_out'].map((to) => `${from}>${to}`)),
]);

test('the status list is exactly the ResponseStatus enum of the OpenAPI document', () => {
  const document = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
  assert.deepEqual([...document.components.schemas.ResponseStatus.enum].sort(), [...ALL].sort());
  for (const status of ALL) assert.ok(matchesSchema('ResponseStatus', status).ok, status);
  assert.deepEqual(Object.keys(TRANSITIONS).sort(), [...ALL].sort());
});

test('every (from, to) pair is allowed exactly when the diagram draws it', () => {
  const wrong: string[] = [];
  for (const from of ALL) {
    for (const to of ALL) {
      const expected = EXPECTED.has(`${from}>${to}`);
      if (canTransition(from, to) !== expected) wrong.push(`${from} → ${to}: expected ${expected ? 'allowed' : 'refused'}`);
    }
  }
  assert.deepEqual(wrong, []);
  assert.equal(ALL.flatMap((from) => ALL.filter((to) => canTransition(from, to))).length, EXPECTED.size);
});

test('no status transitions to itself', () => {
  for (const status of ALL) assert.equal(canTransition(status, status), false, status);
});

test('terminal states have no exits', () => {
  for (const status of TERMINAL) {
    assert.deepEqual(TRANSITIONS[status], [], status);
    for (const to of ALL) assert.equal(canTransition(status, to), false, `${status} → ${to}`);
  }
});

test('nothing returns to queued once it has left it', () => {
  for (const from of ALL) assert.equal(canTransition(from, 'queued'), false, from);
});

test('a waiting or parked state only resumes to in_progress, never straight to completed or another wait', () => {
  for (const from of SUSPENDED) {
    assert.equal(canTransition(from, 'completed'), false);
    assert.equal(canTransition(from, 'budget_exceeded'), false);
    for (const other of SUSPENDED) assert.equal(canTransition(from, other), false, `${from} → ${other}`);
  }
});

test('isTerminal and isWaiting classify every status, and no status is both', () => {
  assert.deepEqual([...TERMINAL_STATUSES].sort(), [...TERMINAL].sort());
  assert.deepEqual([...WAITING_STATUSES].sort(), [...WAITING].sort());
  for (const status of ALL) {
    assert.equal(isTerminal(status), TERMINAL.includes(status), status);
    assert.equal(isWaiting(status), WAITING.includes(status), status);
    assert.ok(!(isTerminal(status) && isWaiting(status)));
  }
});

test('parked is suspended but not settled: no worker holds it, and no caller is answered at it', () => {
  for (const status of ALL) {
    assert.equal(isParked(status), status === 'parked', status);
    assert.equal(isSuspended(status), SUSPENDED.includes(status), status);
    assert.equal(isSettled(status), TERMINAL.includes(status) || WAITING.includes(status), status);
  }
  assert.equal(isSettled('parked'), false);
  assert.equal(isWaiting('parked'), false);
});

test('a claim takes exactly the statuses that may become in_progress, and in_progress itself', () => {
  assert.deepEqual([...CLAIMABLE_STATUSES].sort(), ['in_progress', 'queued', ...SUSPENDED].sort());
});
