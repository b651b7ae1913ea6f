// Waiting: every response that needs a person (an approval, a tool output,
// an answer), re-read every 2 seconds.
import { RequiredActions } from './actions';
import { palai } from './api';
import { domId, formatTime } from './format';
import { useResource } from './hooks';
import { href } from './router';
import { WAITING_STATUSES } from './statuses';
import { ErrorAlert, Loading } from './ui';

export function WaitingPage() {
  const waiting = useResource(
    async (signal) => {
      const pages = await Promise.all(WAITING_STATUSES.map((status) => palai().GET('/v1/responses', { params: { query: { status, limit: 100 } }, signal })));
      return pages.flatMap((page) => page.data).sort((a, b) => b.created_at - a.created_at);
    },
    [],
    2000,
  );

  return (
    <>
      <h1>Waiting for a person</h1>
      <ErrorAlert error={waiting.error} />
      {waiting.data === undefined ? (
        !waiting.error && <Loading what="what waits" />
      ) : waiting.data.length === 0 ? (
        <p>Nothing is waiting for a person.</p>
      ) : (
        waiting.data.map((response) => {
          const headingId = domId('waiting', response.id);
          return (
            <article key={response.id} class="card" aria-labelledby={headingId}>
              <h2 id={headingId} class="id-heading">
                <a href={href('runs', response.id)}>{response.id}</a>
              </h2>
              <p class="muted">
                <span class={`status status-${response.palai_status}`}>{response.palai_status}</span> · agent {response.agent.name} · created{' '}
                {formatTime(response.created_at)}
              </p>
              <RequiredActions response={response} onDone={waiting.reload} />
            </article>
          );
        })
      )}
    </>
  );
}
