// A Slack thread says nothing at a parked status: the run still works for the
// user, so no notice is posted and the answer is not done until the run ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JournalEntry, ResponseState, ResponseStatus } from '../../core/api/index.js';
import { answerOf } from '../../bots/slack/answer.js';

const state = (status: ResponseStatus): ResponseState => ({
  id: 'resp_test',
  status,
  agent: { id: 'agt_test', name: 'a', revision: 1, revision_id: 'rev_test' },
  session_id: null,
  previous_response_id: null,
  instructions: null,
  background: false,
  metadata: {},
  options: { max_output_tokens: null, temperature: null, user: null },
  output: [],
  usage: null,
  usage_by_step: [],
  error: null,
  pending_calls: [],
  created_at: 0,
  completed_at: null,
  status_changed_at: 0,
});

let sequence = 0;
const status = (s: ResponseStatus): JournalEntry => ({ sequence: sequence++, event: { type: 'status', status: s, response: state(s) } });
const delta = (text: string): JournalEntry => ({
  sequence: sequence++,
  event: { type: 'text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: text },
});

test('a parked run posts no notice and is not done; its answer comes when it ends', () => {
  const parked = answerOf([status('queued'), status('in_progress'), status('parked')]);
  assert.deepEqual(parked, { segments: [], done: false });
  const ended = answerOf([status('queued'), status('in_progress'), status('parked'), status('in_progress'), delta('the node said hi'), status('completed')]);
  assert.deepEqual(ended, { segments: [{ kind: 'text', text: 'the node said hi', complete: true }], done: true });
});
