// Runs: the project's responses, newest first, re-read every 2 seconds.
import type { ResponseStatus } from '@palai/sdk';
import { useState } from 'preact/hooks';
import { palai } from './api';
import { formatTime, orDash } from './format';
import { useDebounced, useResource } from './hooks';
import { href } from './router';
import { RESPONSE_STATUSES } from './statuses';
import { ErrorAlert, Loading, TableWrap } from './ui';

export function RunsPage() {
  const [agent, setAgent] = useState('');
  const [session, setSession] = useState('');
  const [status, setStatus] = useState<ResponseStatus | ''>('');
  const agentFilter = useDebounced(agent.trim(), 400);
  const sessionFilter = useDebounced(session.trim(), 400);
  const runs = useResource(
    (signal) =>
      palai().GET('/v1/responses', {
        params: {
          query: {
            limit: 50,
            ...(agentFilter ? { agent: agentFilter } : {}),
            ...(sessionFilter ? { session_id: sessionFilter } : {}),
            ...(status ? { status } : {}),
          },
        },
        signal,
      }),
    [agentFilter, sessionFilter, status],
    2000,
  );

  return (
    <>
      <h1>Runs</h1>
      <form class="filters" role="search" aria-label="Filter runs" onSubmit={(event) => event.preventDefault()}>
        <div class="field">
          <label for="runs-agent">Agent</label>
          <input id="runs-agent" type="text" value={agent} onInput={(event) => setAgent(event.currentTarget.value)} placeholder="name or id" />
        </div>
        <div class="field">
          <label for="runs-session">Session</label>
          <input id="runs-session" type="text" value={session} onInput={(event) => setSession(event.currentTarget.value)} placeholder="ses_…" />
        </div>
        <div class="field">
          <label for="runs-status">Status</label>
          <select id="runs-status" value={status} onChange={(event) => setStatus(event.currentTarget.value as ResponseStatus | '')}>
            <option value="">Any</option>
            {RESPONSE_STATUSES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </div>
      </form>
      <ErrorAlert error={runs.error} />
      {runs.data === undefined ? (
        !runs.error && <Loading what="runs" />
      ) : runs.data.data.length === 0 ? (
        <p class="muted">No runs match.</p>
      ) : (
        <TableWrap label="Runs">
          <thead>
            <tr>
              <th scope="col">Response</th>
              <th scope="col">Agent</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Session</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.data.map((run) => (
              <tr key={run.id}>
                <td>
                  <a href={href('runs', run.id)}>{run.id}</a>
                </td>
                <td>{run.agent.name}</td>
                <td>
                  <span class={`status status-${run.palai_status}`}>{run.palai_status}</span>
                </td>
                <td>{formatTime(run.created_at)}</td>
                <td>{run.session_id ? <a href={href('sessions', run.session_id)}>{run.session_id}</a> : orDash(run.session_id)}</td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
    </>
  );
}
