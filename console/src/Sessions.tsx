// Sessions. The API lists none, so the page offers the sessions of the
// newest runs, and opens any other by its id.
import type { Item } from '@palai/sdk';
import { useState } from 'preact/hooks';
import { palai } from './api';
import { formatTime, pretty } from './format';
import { useResource } from './hooks';
import { ItemList } from './items';
import { href, navigate } from './router';
import { ErrorAlert, Facts, Json, Loading } from './ui';

export function SessionsPage() {
  const [sessionId, setSessionId] = useState('');
  const recent = useResource(async (signal) => {
    const page = await palai().GET('/v1/responses', { params: { query: { limit: 100 } }, signal });
    const seen = new Map<string, { agent: string; lastRun: number }>();
    for (const response of page.data) {
      if (response.session_id && !seen.has(response.session_id)) seen.set(response.session_id, { agent: response.agent.name, lastRun: response.created_at });
    }
    return [...seen.entries()];
  }, []);

  const open = (event: Event) => {
    event.preventDefault();
    const id = sessionId.trim();
    if (id) navigate('sessions', id);
  };

  return (
    <>
      <h1>Sessions</h1>
      <form class="filters" onSubmit={open}>
        <div class="field">
          <label for="session-id">Session id</label>
          <input id="session-id" type="text" value={sessionId} onInput={(event) => setSessionId(event.currentTarget.value)} placeholder="ses_…" required />
        </div>
        <div class="field field-button">
          <button type="submit">Open</button>
        </div>
      </form>
      <h2>Sessions of recent runs</h2>
      <ErrorAlert error={recent.error} />
      {recent.data === undefined ? (
        !recent.error && <Loading what="sessions" />
      ) : recent.data.length === 0 ? (
        <p class="muted">None of the newest runs is in a session.</p>
      ) : (
        <ul class="links">
          {recent.data.map(([id, info]) => (
            <li key={id}>
              <a href={href('sessions', id)}>{id}</a>{' '}
              <span class="muted">
                · {info.agent} · last run {formatTime(info.lastRun)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function SessionPage({ id }: { id: string }) {
  const loaded = useResource(
    async (signal) => {
      const session = await palai().GET('/v1/sessions/{session_id}', { params: { path: { session_id: id } }, signal });
      const items: Item[] = [];
      for (let after: string | undefined; ;) {
        const page = await palai().GET('/v1/sessions/{session_id}/items', {
          params: { path: { session_id: id }, query: { limit: 100, ...(after ? { after } : {}) } },
          signal,
        });
        items.push(...page.data);
        if (!page.has_more || !page.last_id || items.length >= 2000) break;
        after = page.last_id;
      }
      const runs = await palai().GET('/v1/responses', { params: { query: { session_id: id, limit: 100 } }, signal });
      return { session, items, runs: runs.data };
    },
    [id],
    5000,
  );
  const session = loaded.data?.session;

  return (
    <>
      <h1 class="id-heading">{id}</h1>
      <ErrorAlert error={loaded.error} />
      {session === undefined ? (
        !loaded.error && <Loading what="the session" />
      ) : (
        <>
          <Facts
            facts={[
              ['Agent', session.agent_id ? <a href={href('agents', session.agent_id)}>{session.agent ?? session.agent_id}</a> : 'Not bound yet'],
              ['Created', formatTime(session.created_at)],
            ]}
          />
          {Object.keys(session.metadata ?? {}).length > 0 && (
            <>
              <h2>Metadata</h2>
              <Json value={pretty(session.metadata)} />
            </>
          )}
          <section aria-labelledby="session-items">
            <h2 id="session-items">Items</h2>
            <ItemList items={loaded.data?.items ?? []} empty="The session has no items yet." />
          </section>
          <section aria-labelledby="session-runs">
            <h2 id="session-runs">Runs</h2>
            {(loaded.data?.runs ?? []).length === 0 ? (
              <p class="muted">No runs.</p>
            ) : (
              <ul class="links">
                {(loaded.data?.runs ?? []).map((run) => (
                  <li key={run.id}>
                    <a href={href('runs', run.id)}>{run.id}</a>{' '}
                    <span class="muted">
                      · <span class={`status status-${run.palai_status}`}>{run.palai_status}</span> · {formatTime(run.created_at)}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </section>
        </>
      )}
    </>
  );
}
