// The ledger's state machine as data: every state is in the table, ended
// states go nowhere, every open state can end, and the derived sets agree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENDED_STATES, INVOCATION_TRANSITIONS, OPEN_STATES, SENT_STATES, canMove, isOpen } from '../../core/surfaces/nodes/invocation-states.js';
import { invocationOutput } from '../../core/surfaces/nodes/node-views.js';

const ALL = Object.keys(INVOCATION_TRANSITIONS);

test('open and ended states split the table, and only open states move', () => {
  assert.deepEqual([...OPEN_STATES, ...ENDED_STATES].sort(), [...ALL].sort());
  for (const state of ENDED_STATES) assert.deepEqual(INVOCATION_TRANSITIONS[state], [], state);
  for (const state of OPEN_STATES) {
    assert.ok(isOpen(state));
    assert.ok(
      INVOCATION_TRANSITIONS[state].some((to) => (ENDED_STATES as readonly string[]).includes(to)),
      `${state} can end`,
    );
  }
  for (const state of SENT_STATES) assert.ok(canMove(state, 'unknown') && canMove(state, 'canceled'), state);
  assert.ok(!canMove('prepared', 'succeeded'), 'a plan never sent has no result');
  assert.ok(!canMove('prepared', 'unknown'), 'a plan never sent is never unknown');
});

test('an open invocation has no output yet; every ended one has one the model reads', () => {
  for (const state of OPEN_STATES) assert.equal(invocationOutput({ state, result: null, failure_code: null, failure_message: null }), null);
  const codes = { expired: 'NODE_UNAVAILABLE', canceled: 'INVOCATION_CANCELED', unknown: 'INVOCATION_UNKNOWN', failed: 'EXECUTION_FAILED' } as const;
  for (const [state, code] of Object.entries(codes)) {
    const output = JSON.parse(invocationOutput({ state: state as keyof typeof codes, result: null, failure_code: null, failure_message: null })!);
    assert.equal(output.error.code, code);
    assert.ok(output.error.message.length > 0 && output.error.message.length <= 512);
  }
  const result = { exit_code: 3, stdout: 'out', stderr: 'err', truncated: true, signal: null };
  assert.deepEqual(JSON.parse(invocationOutput({ state: 'failed', result, failure_code: null, failure_message: null })!), {
    exit_code: 3,
    stdout: 'out',
    stderr: 'err',
    truncated: true,
  });
  const long = JSON.parse(invocationOutput({ state: 'failed', result: null, failure_code: 'COMMAND_DENIED', failure_message: 'x'.repeat(2000) })!);
  assert.equal(long.error.code, 'COMMAND_DENIED');
  assert.equal(long.error.message.length, 512);
});
