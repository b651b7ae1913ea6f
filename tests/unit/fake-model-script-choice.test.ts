// The fake model's script choices: the first choice whose conditions all hold
// (first call or not, response metadata prefixes, the latest input) plays its
// step; with none, the script or the echo plays as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeModel } from '../../adapters/models/fake/fake-model.js';
import { latestInput } from '../../adapters/models/fake/script-choice.js';
import type { ModelEvent, ModelRequest } from '../../core/models/model-port.js';
import type { FakeScriptChoice, FakeStep, Item } from '../../generated/schemas.js';
import { testTransport } from '../support/wire/transport.js';

const user = (text: string): Item => ({ id: 'msg_u', type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const call = (callId: string): Item => ({ id: 'fc_1', type: 'function_call', call_id: callId, name: 'ask_user', arguments: '{"question":"?"}' });
const output = (callId: string, text: string): Item => ({ id: 'fco_1', type: 'function_call_output', call_id: callId, output: text });

const CHOICES: FakeScriptChoice[] = [
  { when: { first_call: true, metadata_prefix: { a2a_message_id: 'ask-' } }, step: { tool_calls: [{ name: 'ask_user', arguments: { question: 'More?' } }] } },
  { when: { input_prefix: 'again' }, step: { text: 'once more' } },
  { when: { first_call: false }, step: { text: 'later call' } },
];

function requestOf(items: Item[], options: { stepIndex?: number; metadata?: Record<string, string>; script?: FakeStep[] } = {}): ModelRequest {
  return {
    model: { provider: 'fake', script_choices: CHOICES, ...(options.script ? { script: options.script } : {}) },
    modelName: null,
    responseId: 'resp_test',
    credentials: { apiKey: null, baseUrl: null },
    transport: testTransport,
    instructions: null,
    items,
    tools: [],
    stepIndex: options.stepIndex ?? 0,
    metadata: options.metadata ?? {},
    signal: new AbortController().signal,
  };
}

async function played(request: ModelRequest): Promise<string> {
  const events: ModelEvent[] = [];
  for await (const event of new FakeModel().stream(request)) events.push(event);
  const tool = events.find((e) => e.type === 'tool_call');
  if (tool?.type === 'tool_call') return `tool ${tool.name}`;
  return events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : [])).join('');
}

test('a choice by metadata prefix plays on the first call only', async () => {
  assert.equal(await played(requestOf([user('hi')], { metadata: { a2a_message_id: 'ask-123' } })), 'tool ask_user');
  assert.equal(await played(requestOf([user('hi')], { metadata: { a2a_message_id: 'other-123' } })), 'hi', 'no choice: the echo');
  assert.equal(await played(requestOf([user('hi')])), 'hi', 'no metadata: no match');
});

test('the latest input is the last user message or the last tool output, and the first matching choice wins', async () => {
  assert.equal(latestInput([user('first'), call('c1'), output('c1', 'again please')]), 'again please');
  assert.equal(await played(requestOf([user('first'), call('c1'), output('c1', 'again please')], { stepIndex: 1 })), 'once more');
  assert.equal(await played(requestOf([user('first'), call('c1'), output('c1', 'done')], { stepIndex: 1 })), 'later call');
});

test('without a matching choice the script plays its step', async () => {
  assert.equal(await played(requestOf([user('hi')], { script: [{ text: 'scripted' }] })), 'scripted');
});
