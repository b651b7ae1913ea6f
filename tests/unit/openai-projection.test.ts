// The REST projection of kernel statuses and events, checked against a table
// written out here independently, and against the OpenAI SDK's own stream
// accumulator, which throws on any event type outside the SDK's union.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type OpenAI from 'openai';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import type { JournalEntry, ResponseState } from '../../core/api/index.js';
import type { KernelEvent } from '../../generated/protocol-schemas.js';
import type { PendingToolCall, ResponseStatus } from '../../generated/schemas.js';
import { openAiStreamEvent } from '../../adapters/http/openai-events.js';
import { openAiResponse } from '../../adapters/http/openai-response.js';
import { STATUS_PROJECTION, TERMINAL_EXTENDED_EVENTS, statusEvent } from '../../adapters/http/openai-status.js';
import { matchesSchema } from '../../adapters/http/validation.js';

// status → [OpenAI status, default stream event, extended stream event]
const EXPECTED: Record<ResponseStatus, [string, string, string]> = {
  queued: ['queued', 'response.created', 'response.created'],
  in_progress: ['in_progress', 'response.in_progress', 'response.in_progress'],
  waiting_for_approval: ['completed', 'response.completed', 'response.waiting_for_approval'],
  waiting_for_tool: ['completed', 'response.completed', 'response.waiting_for_tool'],
  waiting_for_input: ['completed', 'response.completed', 'response.waiting_for_input'],
  parked: ['in_progress', 'response.in_progress', 'response.in_progress'],
  completed: ['completed', 'response.completed', 'response.completed'],
  failed: ['failed', 'response.failed', 'response.failed'],
  canceled: ['cancelled', 'response.incomplete', 'response.cancelled'],
  timed_out: ['incomplete', 'response.incomplete', 'response.incomplete'],
  budget_exceeded: ['incomplete', 'response.incomplete', 'response.incomplete'],
};
const ALL = Object.keys(EXPECTED) as ResponseStatus[];

// The statuses of the SDK's `Response['status']` (openai 6.x) — and so, by
// assignment, a compile-time check that every projected status is one of them.
const SDK_STATUSES: OpenAI.Responses.ResponseStatus[] = ['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete'];

// Recorded from the Python SDK (openai 2.x), which cannot be installed offline
// here: the event types its `ResponseStreamEvent` union discriminates on among
// those Palai sends, and the one `get_final_response()` needs to have seen.
const PYTHON_SDK_EVENT_TYPES = new Set([
  'response.created',
  'response.queued',
  'response.in_progress',
  'response.completed',
  'response.failed',
  'response.incomplete',
  'response.output_item.added',
  'response.output_item.done',
  'response.content_part.added',
  'response.content_part.done',
  'response.output_text.delta',
  'response.output_text.done',
]);
const PYTHON_FINAL_EVENT = 'response.completed';

const AGENT = { id: 'agt_1', name: 'a', revision: 1, revision_id: 'agtrev_1' };

function stateWith(status: ResponseStatus, extra: Partial<ResponseState> = {}): ResponseState {
  return {
    id: 'resp_1',
    status,
    agent: AGENT,
    session_id: null,
    previous_response_id: null,
    instructions: null,
    background: false,
    metadata: {},
    output: [],
    usage: null,
    usage_by_step: [],
    error: null,
    pending_calls: [],
    created_at: 0,
    completed_at: null,
    ...extra,
  };
}

const pending = (waiting_for: PendingToolCall['waiting_for'], extra: Partial<PendingToolCall> = {}): PendingToolCall => ({
  call_id: `call_${waiting_for}`,
  name: waiting_for === 'input' ? 'ask_user' : 'deploy',
  arguments: '{}',
  risk: 'write',
  waiting_for,
  ...extra,
});

test('every kernel status has exactly the OpenAI status and events of the table', () => {
  assert.deepEqual(Object.keys(STATUS_PROJECTION).sort(), [...ALL].sort());
  for (const status of ALL) {
    const [openai, event, extended] = EXPECTED[status];
    assert.deepEqual(STATUS_PROJECTION[status], { status: openai, event, extendedEvent: extended }, status);
    assert.equal(statusEvent(status, 'openai'), event);
    assert.equal(statusEvent(status, 'extended'), extended);
    assert.ok((SDK_STATUSES as string[]).includes(openai), `${status} → ${openai} is a status the SDK knows`);
    const sdkStatus: OpenAI.Responses.ResponseStatus = STATUS_PROJECTION[status].status;
    assert.equal(sdkStatus, openai);
  }
});

test('the response object says both: OpenAI status in `status`, the kernel status in `palai_status`', () => {
  for (const status of ALL) {
    const object = openAiResponse(stateWith(status));
    assert.equal(object.status, EXPECTED[status][0]);
    assert.equal(object.palai_status, status);
    assert.ok(matchesSchema('Response', object).ok, `${status}: ${JSON.stringify(matchesSchema('Response', object).errors)}`);
  }
});

test('a response waiting for approval lists an mcp_approval_request per call awaiting a decision', () => {
  const object = openAiResponse(stateWith('waiting_for_approval', { pending_calls: [pending('approval', { arguments: '{"env":"prod"}' })] }));
  assert.deepEqual(object.output, [{ id: 'call_approval', type: 'mcp_approval_request', server_label: 'palai', name: 'deploy', arguments: '{"env":"prod"}' }]);
  assert.equal(object.output_text, '');
  assert.ok(matchesSchema('Response', object).ok);
});

test('a question is an assistant message after the output, and is the output_text', () => {
  const said = {
    id: 'msg_1',
    type: 'message' as const,
    role: 'assistant' as const,
    status: 'completed' as const,
    content: [{ type: 'output_text' as const, text: 'Hmm. ', annotations: [] }],
  };
  const object = openAiResponse(stateWith('waiting_for_input', { output: [said], pending_calls: [pending('input', { question: 'Which city?' })] }));
  assert.equal(object.status, 'completed');
  assert.equal(object.output.length, 2);
  assert.deepEqual(object.output[1], {
    id: 'msg_call_input',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Which city?', annotations: [] }],
  });
  assert.equal(object.output_text, 'Hmm. Which city?');
});

test('client function calls stand as they are: no item is added for them', () => {
  const call = { id: 'fc_1', type: 'function_call' as const, call_id: 'call_tool_output', name: 'get_weather', arguments: '{}', status: 'completed' as const };
  const object = openAiResponse(stateWith('waiting_for_tool', { output: [call], pending_calls: [pending('tool_output')] }));
  assert.deepEqual(object.output, [call]);
});

test("in Palai's vocabulary exactly the terminal statuses end a stream, one event each kind", () => {
  assert.deepEqual([...TERMINAL_EXTENDED_EVENTS].sort(), ['response.cancelled', 'response.completed', 'response.failed', 'response.incomplete']);
  for (const status of ALL) {
    const terminal = ['completed', 'failed', 'canceled', 'timed_out', 'budget_exceeded'].includes(status);
    assert.equal(TERMINAL_EXTENDED_EVENTS.has(statusEvent(status, 'extended')), terminal, status);
  }
});

test('every event type either vocabulary sends is a lifecycle event the OpenAPI document declares', () => {
  for (const status of ALL) {
    for (const type of [statusEvent(status, 'openai'), statusEvent(status, 'extended')]) {
      const check = matchesSchema('ResponseLifecycleEvent', { type, sequence_number: 0, response: openAiResponse(stateWith(status)) });
      assert.ok(check.ok, `${type}: ${JSON.stringify(check.errors)}`);
    }
  }
});

/** A journal with every kind of kernel event, ending in `status`. */
function journalEndingIn(status: ResponseStatus): JournalEntry[] {
  const message = { id: 'msg_1', type: 'message' as const, role: 'assistant' as const, status: 'in_progress' as const, content: [] };
  const part = { type: 'output_text' as const, text: '', annotations: [] };
  const done = { ...message, status: 'completed' as const, content: [{ ...part, text: 'Hi' }] };
  const call = { id: 'fc_1', type: 'function_call' as const, call_id: 'call_1', name: 'echo', arguments: '{}', status: 'completed' as const };
  const output = { id: 'fco_1', type: 'function_call_output' as const, call_id: 'call_1', output: '{}', status: 'completed' as const };
  const events: KernelEvent[] = [
    { type: 'status', status: 'queued', response: stateWith('queued') },
    { type: 'status', status: 'in_progress', response: stateWith('in_progress') },
    { type: 'item.added', output_index: 0, item: call },
    { type: 'item.done', output_index: 0, item: call },
    { type: 'item.added', output_index: 1, item: output },
    { type: 'item.done', output_index: 1, item: output },
    { type: 'item.added', output_index: 2, item: message },
    { type: 'content.added', item_id: 'msg_1', output_index: 2, content_index: 0, part },
    { type: 'text.delta', item_id: 'msg_1', output_index: 2, content_index: 0, delta: 'Hi' },
    { type: 'text.done', item_id: 'msg_1', output_index: 2, content_index: 0, text: 'Hi' },
    { type: 'content.done', item_id: 'msg_1', output_index: 2, content_index: 0, part: { ...part, text: 'Hi' } },
    { type: 'item.done', output_index: 2, item: done },
    { type: 'item.updated', output_index: 2, item: { ...done, status: 'incomplete' } },
    { type: 'status', status, response: stateWith(status, { output: [call, output, { ...done, status: 'incomplete' }] }) },
  ];
  return events.map((event, sequence) => ({ sequence, event }));
}

test('every event type the default stream can send is one the SDK handles (walked through its accumulator)', () => {
  for (const status of ALL.filter((s) => s !== 'queued' && s !== 'in_progress')) {
    let snapshot: OpenAI.Responses.Response | undefined;
    const types = new Set<string>();
    for (const entry of journalEndingIn(status)) {
      const event = openAiStreamEvent(entry, 'openai');
      types.add(event.type);
      // Throws "Unhandled response stream event" for a type outside the SDK's union.
      snapshot = accumulateResponse(event as unknown as OpenAI.Responses.ResponseStreamEvent, snapshot);
    }
    assert.equal(snapshot?.status, EXPECTED[status][0], status);
    for (const type of types) assert.ok(PYTHON_SDK_EVENT_TYPES.has(type), `${type} is in the recorded Python SDK union`);
    if (['completed', 'waiting_for_approval', 'waiting_for_tool', 'waiting_for_input'].includes(status)) assert.ok(types.has(PYTHON_FINAL_EVENT), status);
  }
});

test("Palai's own events are not in the SDK's union: they are sent only to clients that ask", () => {
  for (const status of ['waiting_for_approval', 'waiting_for_tool', 'waiting_for_input', 'canceled'] as ResponseStatus[]) {
    const [created, ...rest] = journalEndingIn(status);
    const last = rest.at(-1)!;
    const snapshot = accumulateResponse(openAiStreamEvent(created, 'extended') as unknown as OpenAI.Responses.ResponseStreamEvent, undefined);
    assert.throws(
      () => accumulateResponse(openAiStreamEvent(last, 'extended') as unknown as OpenAI.Responses.ResponseStreamEvent, snapshot),
      /Unhandled response stream event/,
    );
  }
});
