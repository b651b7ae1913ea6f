// What a person does for a response that waits: approve or deny a call,
// answer the agent's question, or supply a client tool's output. Shown on the
// Waiting page and on the run page alike.
import type { PendingToolCall, Response as PalaiResponse } from '@palai/sdk';
import { useState } from 'preact/hooks';
import { palai } from './api';
import { domId, formatTime, pretty, prettyJsonText } from './format';
import { useAction } from './hooks';
import { ErrorAlert } from './ui';

function CallAction({ responseId, call, onDone }: { responseId: string; call: PendingToolCall; onDone: () => void }) {
  const action = useAction();
  const [text, setText] = useState('');
  const fieldId = domId('answer', `${responseId}-${call.call_id}`);
  const path = () => ({ params: { path: { response_id: responseId } } });

  const decide = async (decision: 'approve' | 'deny') => {
    if (await action.run(() => palai().POST('/v1/responses/{response_id}/approvals', { ...path(), body: { call_id: call.call_id, decision } }))) onDone();
  };
  const answer = async (event: Event) => {
    event.preventDefault();
    if (await action.run(() => palai().POST('/v1/responses/{response_id}/input', { ...path(), body: { input: text } }))) onDone();
  };
  const submitOutput = async (event: Event) => {
    event.preventDefault();
    const body = { outputs: [{ call_id: call.call_id, output: text }] };
    if (await action.run(() => palai().POST('/v1/responses/{response_id}/tool_outputs', { ...path(), body }))) onDone();
  };

  return (
    <div class="call">
      <h3 class="call-name">{call.name}</h3>
      <p class="muted">
        Waits for {call.waiting_for.replace('_', ' ')} · risk {call.risk} · call {call.call_id}
        {call.approval_deadline ? ` · denied automatically at ${formatTime(call.approval_deadline)}` : ''}
      </p>
      {call.question !== undefined && <p class="question">{call.question}</p>}
      <h4>Arguments</h4>
      <pre class="json">{prettyJsonText(call.arguments)}</pre>
      {call.approval_display !== undefined && (
        <>
          <h4>What will run</h4>
          <pre class="json">{pretty(call.approval_display)}</pre>
        </>
      )}
      {call.waiting_for === 'approval' && (
        <div class="buttons">
          <button type="button" class="primary" disabled={action.busy} onClick={() => void decide('approve')}>
            Approve
          </button>
          <button type="button" class="danger" disabled={action.busy} onClick={() => void decide('deny')}>
            Deny
          </button>
        </div>
      )}
      {call.waiting_for === 'input' && (
        <form class="stack" onSubmit={(event) => void answer(event)}>
          <label for={fieldId}>Answer</label>
          <textarea id={fieldId} rows={3} value={text} onInput={(event) => setText(event.currentTarget.value)} />
          <div class="buttons">
            <button type="submit" class="primary" disabled={action.busy}>
              Send answer
            </button>
          </div>
        </form>
      )}
      {call.waiting_for === 'tool_output' && (
        <form class="stack" onSubmit={(event) => void submitOutput(event)}>
          <label for={fieldId}>Tool output</label>
          <textarea id={fieldId} rows={3} value={text} onInput={(event) => setText(event.currentTarget.value)} />
          <div class="buttons">
            <button type="submit" class="primary" disabled={action.busy}>
              Submit output
            </button>
          </div>
        </form>
      )}
      <ErrorAlert error={action.error} />
    </div>
  );
}

export function RequiredActions({ response, onDone }: { response: PalaiResponse; onDone: () => void }) {
  const calls = response.required_action?.calls ?? [];
  if (calls.length === 0) return <p class="muted">Nothing to answer.</p>;
  return (
    <div class="calls">
      {calls.map((call) => (
        <CallAction key={call.call_id} responseId={response.id} call={call} onDone={onDone} />
      ))}
    </div>
  );
}
