// The one table from kernel status to A2A task state, checked for every status.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskState } from '@a2a-js/sdk';
import { isTerminal, isWaiting, type ResponseStatus } from '../../core/api/index.js';
import { statusesOf, TASK_STATE } from '../../adapters/a2a/task-state.js';
import { A2A_ERROR_FOR, ServiceUnavailableError, toA2aError } from '../../adapters/a2a/errors.js';
import { atBoundaryError } from '../../core/api/boundary.js';
import { PalaiError } from '../../core/errors/palai-error.js';
import { problemTypes } from '../../core/errors/problem-types.js';
import { createLogger } from '../../core/logger.js';

const ALL: ResponseStatus[] = [
  'queued',
  'in_progress',
  'waiting_for_approval',
  'waiting_for_tool',
  'waiting_for_input',
  'parked',
  'completed',
  'failed',
  'canceled',
  'timed_out',
  'budget_exceeded',
];
const A2A_TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);

test('every kernel status has exactly one task state, as the table says', () => {
  assert.deepEqual(Object.keys(TASK_STATE).sort(), [...ALL].sort());
  const expected: Record<ResponseStatus, TaskState> = {
    queued: TaskState.TASK_STATE_SUBMITTED,
    in_progress: TaskState.TASK_STATE_WORKING,
    waiting_for_approval: TaskState.TASK_STATE_INPUT_REQUIRED,
    waiting_for_tool: TaskState.TASK_STATE_INPUT_REQUIRED,
    waiting_for_input: TaskState.TASK_STATE_INPUT_REQUIRED,
    parked: TaskState.TASK_STATE_WORKING,
    completed: TaskState.TASK_STATE_COMPLETED,
    failed: TaskState.TASK_STATE_FAILED,
    canceled: TaskState.TASK_STATE_CANCELED,
    timed_out: TaskState.TASK_STATE_FAILED,
    budget_exceeded: TaskState.TASK_STATE_FAILED,
  };
  for (const status of ALL) assert.equal(TASK_STATE[status], expected[status], status);
});

test('terminal statuses are terminal task states and only they; every wait is input-required, a parked response working', () => {
  for (const status of ALL) {
    assert.equal(A2A_TERMINAL.has(TASK_STATE[status]), isTerminal(status), status);
    assert.equal(TASK_STATE[status] === TaskState.TASK_STATE_INPUT_REQUIRED, isWaiting(status), status);
  }
});

test('statusesOf is the inverse of the table (ListTasks filters by it)', () => {
  for (const state of Object.values(TaskState).filter((v): v is TaskState => typeof v === 'number')) {
    assert.deepEqual(
      statusesOf(state),
      ALL.filter((s) => TASK_STATE[s] === state),
      String(state),
    );
  }
  assert.deepEqual(statusesOf(TaskState.TASK_STATE_REJECTED), []);
});

test('every problem type maps to an A2A error', () => {
  assert.deepEqual(Object.keys(A2A_ERROR_FOR).sort(), Object.keys(problemTypes).sort());
});

test('a problem that means the service cannot answer now, or a transient driver error (as the kernel API hands it over), is the unavailable error with a retry delay', () => {
  const logger = createLogger('silent');
  for (const slug of ['store-unavailable', 'store-busy', 'not-ready', 'shutting-down'] as const) {
    const error = toA2aError(new PalaiError(slug, `${slug} right now`), logger);
    assert.ok(error instanceof ServiceUnavailableError, slug);
    assert.equal(error.message, `${slug} right now`);
    assert.deepEqual(error.metadata, { palai_problem: slug });
    assert.ok(error.retryAfterSeconds > 0, slug);
  }
  const reset = toA2aError(atBoundaryError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), logger);
  assert.ok(reset instanceof ServiceUnavailableError);
  assert.deepEqual(reset.metadata, { palai_problem: 'store-unavailable' });
  for (const slug of ['internal', 'not-found', 'validation-failed'] as const)
    assert.ok(!(toA2aError(new PalaiError(slug, 'no'), logger) instanceof ServiceUnavailableError), slug);
});
