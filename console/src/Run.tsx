// One run: its state (kept current), input, output text as it streams, tool
// calls, and the journal of every event received.
import type { Response as PalaiResponse, ResponseOutputItem, ResponseStreamEvent } from '@palai/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { RequiredActions } from './actions';
import { palai, report } from './api';
import { formatTime, orDash, prettyJsonText } from './format';
import { settledProblem, useAction, useResource } from './hooks';
import { ItemList } from './items';
import { href } from './router';
import { FINISHED_STATUSES, isWaiting } from './statuses';
import { ErrorAlert, Facts, Loading, TableWrap } from './ui';

type ToolCallView = { key: string; kind: string; name: string; callId: string; arguments: string; result: string };

/** The output's tool calls with what came of them. */
function toolCalls(output: ResponseOutputItem[]): ToolCallView[] {
  const outputs = new Map<string, string>();
  for (const item of output) if (item.type === 'function_call_output') outputs.set(item.call_id, item.output);
  const calls: ToolCallView[] = [];
  for (const item of output) {
    if (item.type === 'function_call') {
      const result = outputs.get(item.call_id);
      calls.push({ key: item.id, kind: 'function call', name: item.name, callId: item.call_id, arguments: item.arguments, result: result ?? 'No output yet.' });
    } else if (item.type === 'mcp_call') {
      const result = item.error ? `Error: ${item.error}` : (item.output ?? 'No output yet.');
      calls.push({
        key: item.id,
        kind: 'tool call run by Palai',
        name: item.name,
        callId: item.approval_request_id ?? item.id,
        arguments: item.arguments,
        result,
      });
    } else if (item.type === 'mcp_approval_request') {
      calls.push({
        key: `approval-${item.id}`,
        kind: 'approval request',
        name: item.name,
        callId: item.id,
        arguments: item.arguments,
        result: 'Waiting for a decision.',
      });
    }
  }
  return calls;
}

export function RunPage({ id }: { id: string }) {
  const [response, setResponse] = useState<PalaiResponse | null>(null);
  const [events, setEvents] = useState<ResponseStreamEvent[]>([]);
  const [text, setText] = useState('');
  const [streamEnded, setStreamEnded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Each round follows the journal from the last event seen; a new one starts after an action.
  const [followRound, setFollowRound] = useState(0);
  const lastSequence = useRef(-1);
  const following = useRef(false);
  const cancel = useAction();
  const inputItems = useResource(
    (signal) => palai().GET('/v1/responses/{response_id}/input_items', { params: { path: { response_id: id }, query: { order: 'asc', limit: 100 } }, signal }),
    [id],
  );

  const read = async (signal?: AbortSignal) => {
    const current = await palai().GET('/v1/responses/{response_id}', { params: { path: { response_id: id } }, signal });
    setResponse(current);
    setError(null);
    return current;
  };

  // Follow the journal: deltas make the output text, lifecycle events the state.
  useEffect(() => {
    const controller = new AbortController();
    let stopped = false;
    // Events are applied in batches: a fast stream would otherwise re-render per token.
    let pending: ResponseStreamEvent[] = [];
    let flushTimer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      flushTimer = undefined;
      const batch = pending;
      pending = [];
      if (stopped || batch.length === 0) return;
      setEvents((previous) => [...previous, ...batch]);
      const delta = batch.map((event) => (event.type === 'response.output_text.delta' ? event.delta : '')).join('');
      if (delta) setText((previous) => previous + delta);
      for (let i = batch.length - 1; i >= 0; i--) {
        const event = batch[i];
        if ('response' in event) {
          setResponse(event.response);
          break;
        }
      }
    };
    const follow = async () => {
      following.current = true;
      setStreamEnded(false);
      try {
        for await (const event of palai().responses.follow(id, { startingAfter: lastSequence.current, signal: controller.signal })) {
          if (stopped) return;
          lastSequence.current = event.sequence_number;
          pending.push(event);
          flushTimer ??= setTimeout(flush, 50);
        }
        clearTimeout(flushTimer);
        flush();
        if (!stopped) {
          setStreamEnded(true);
          await read(controller.signal);
        }
      } catch (caught) {
        const problem = stopped ? null : report(caught);
        if (problem !== null) setError(problem);
      } finally {
        if (!stopped) following.current = false;
      }
    };
    void follow();
    return () => {
      stopped = true;
      following.current = false;
      clearTimeout(flushTimer);
      controller.abort();
    };
  }, [id, followRound]);

  // Re-read every 2 s until finished: another person may act on a waiting run; then follow it again.
  useEffect(() => {
    const controller = new AbortController();
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      let finished = false;
      try {
        const current = await read(controller.signal);
        finished = FINISHED_STATUSES.has(current.palai_status);
        const running = !finished && !isWaiting(current.palai_status);
        if (running && !following.current && !stopped) setFollowRound((n) => n + 1);
      } catch (caught) {
        finished = settledProblem(caught);
        const problem = stopped ? null : report(caught);
        if (problem !== null) setError(problem);
      } finally {
        if (!stopped && !finished) timer = setTimeout(() => void poll(), 2000);
      }
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
    };
  }, [id]);

  const afterAction = () => {
    void read().catch((caught: unknown) => setError(report(caught)));
    setFollowRound((n) => n + 1);
  };

  const doCancel = () =>
    void cancel.run(async () => {
      setResponse(await palai().POST('/v1/responses/{response_id}/cancel', { params: { path: { response_id: id } } }));
    });

  const finished = response !== null && FINISHED_STATUSES.has(response.palai_status);
  // Text from the deltas; a journal without deltas (nothing streamed) shows the stored text.
  const outputText = text || (streamEnded || finished ? (response?.output_text ?? '') : '');
  const calls = response ? toolCalls(response.output) : [];

  return (
    <>
      <h1 class="id-heading">{id}</h1>
      <ErrorAlert error={error} />
      {response === null ? (
        !error && <Loading what="the run" />
      ) : (
        <>
          <Facts
            facts={[
              [
                'Status',
                <span role="status" aria-label="Status" class={`status status-${response.palai_status}`}>
                  {response.palai_status}
                </span>,
              ],
              ['Agent', <a href={href('agents', response.agent.id)}>{`${response.agent.name} (revision ${response.agent.revision})`}</a>],
              ['Created', formatTime(response.created_at)],
              ['Completed', formatTime(response.completed_at)],
              ['Session', response.session_id ? <a href={href('sessions', response.session_id)}>{response.session_id}</a> : '—'],
              [
                'Previous response',
                response.previous_response_id ? <a href={href('runs', response.previous_response_id)}>{response.previous_response_id}</a> : '—',
              ],
            ]}
          />
          {response.error && (
            <p class="error-box">
              {response.error.code}: {response.error.message}
            </p>
          )}
          {!finished && (
            <div class="buttons">
              <button type="button" class="danger" disabled={cancel.busy} onClick={doCancel}>
                Cancel
              </button>
            </div>
          )}
          <ErrorAlert error={cancel.error} />
          {isWaiting(response.palai_status) && (
            <section aria-labelledby="run-waiting">
              <h2 id="run-waiting">Waiting for a person</h2>
              <RequiredActions response={response} onDone={afterAction} />
            </section>
          )}
          <section aria-labelledby="run-usage">
            <h2 id="run-usage">Usage</h2>
            {response.usage ? (
              <Facts
                facts={[
                  ['Input tokens', response.usage.input_tokens],
                  ['Output tokens', response.usage.output_tokens],
                  ['Total tokens', response.usage.total_tokens],
                ]}
              />
            ) : (
              <p class="muted">No usage yet.</p>
            )}
          </section>
        </>
      )}
      <section aria-labelledby="run-input">
        <h2 id="run-input">Input</h2>
        <ErrorAlert error={inputItems.error} />
        {inputItems.data ? <ItemList items={inputItems.data.data} empty="No input items." /> : !inputItems.error && <Loading what="the input" />}
      </section>
      <section aria-labelledby="run-output">
        <h2 id="run-output">Output</h2>
        <pre class="output-text" role="log" aria-label="Output text" aria-live="polite">
          {outputText}
        </pre>
      </section>
      <section aria-labelledby="run-tools">
        <h2 id="run-tools">Tool calls</h2>
        {calls.length === 0 ? (
          <p class="muted">No tool calls.</p>
        ) : (
          <ol class="cards">
            {calls.map((call) => (
              <li key={call.key} class="card">
                <h3 class="call-name">{call.name}</h3>
                <p class="muted">
                  {call.kind} · call {orDash(call.callId)}
                </p>
                <h4>Arguments</h4>
                <pre class="json">{prettyJsonText(call.arguments)}</pre>
                <h4>Result</h4>
                <pre class="json">{prettyJsonText(call.result)}</pre>
              </li>
            ))}
          </ol>
        )}
      </section>
      <section aria-labelledby="run-journal">
        <h2 id="run-journal">Journal</h2>
        {events.length === 0 ? (
          <p class="muted">No events received yet.</p>
        ) : (
          <TableWrap label="Journal">
            <thead>
              <tr>
                <th scope="col">Sequence</th>
                <th scope="col">Type</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.sequence_number}>
                  <td>{event.sequence_number}</td>
                  <td>{event.type}</td>
                </tr>
              ))}
            </tbody>
          </TableWrap>
        )}
      </section>
    </>
  );
}
