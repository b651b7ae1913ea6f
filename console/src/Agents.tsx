// Agents, and one agent's spec with its revisions and a diff between two.
import type { Agent, AgentRevision } from '@palai/sdk';
import { useState } from 'preact/hooks';
import { palai } from './api';
import { lineDiff } from './diff';
import { formatTime, pretty } from './format';
import { useResource } from './hooks';
import { href } from './router';
import { ErrorAlert, Facts, Json, Loading, TableWrap } from './ui';

export function AgentsPage() {
  const agents = useResource(async (signal) => {
    const all: Agent[] = [];
    for (let after: string | undefined; ;) {
      const page = await palai().GET('/v1/agents', { params: { query: { limit: 100, ...(after ? { after } : {}) } }, signal });
      all.push(...page.data);
      if (!page.has_more || !page.last_id || all.length >= 1000) return all;
      after = page.last_id;
    }
  }, []);

  return (
    <>
      <h1>Agents</h1>
      <ErrorAlert error={agents.error} />
      {agents.data === undefined ? (
        !agents.error && <Loading what="agents" />
      ) : agents.data.length === 0 ? (
        <p class="muted">No agents yet.</p>
      ) : (
        <TableWrap label="Agents">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Id</th>
              <th scope="col">Revision</th>
              <th scope="col">Model</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {agents.data.map((agent) => (
              <tr key={agent.id}>
                <td>
                  <a href={href('agents', agent.id)}>{agent.name}</a>
                </td>
                <td>{agent.id}</td>
                <td>{agent.revision}</td>
                <td>{[agent.model.provider ?? agent.model.connection, agent.model.name].filter(Boolean).join(' / ')}</td>
                <td>{formatTime(agent.updated_at)}</td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
    </>
  );
}

/** The agent's revisable fields: what a revision's spec holds. */
function specOf(agent: Agent): unknown {
  const { id: _id, object: _object, name: _name, revision: _revision, revision_id: _revisionId, created_at: _c, updated_at: _u, warnings: _w, ...spec } = agent;
  return spec;
}

function RevisionDiff({ revisions }: { revisions: AgentRevision[] }) {
  const numbers = revisions.map((revision) => revision.revision);
  const latest = numbers[numbers.length - 1];
  const [from, setFrom] = useState(numbers.length > 1 ? numbers[numbers.length - 2] : latest);
  const [to, setTo] = useState(latest);
  const specText = (n: number) => pretty(revisions.find((revision) => revision.revision === n)?.spec ?? {});
  const lines = lineDiff(specText(from), specText(to));
  const changed = lines.some((line) => line.kind !== 'same');

  return (
    <>
      <div class="filters">
        <div class="field">
          <label for="diff-from">From</label>
          <select id="diff-from" value={String(from)} onChange={(event) => setFrom(Number(event.currentTarget.value))}>
            {numbers.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="diff-to">To</label>
          <select id="diff-to" value={String(to)} onChange={(event) => setTo(Number(event.currentTarget.value))}>
            {numbers.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </div>
      </div>
      {!changed && <p class="muted">The two revisions' specs are the same.</p>}
      <pre class="diff" aria-label={`Changes from revision ${from} to revision ${to}`}>
        {lines.map((line, index) => (
          <span key={index} class={line.kind}>
            {line.kind === 'removed' ? '- ' : line.kind === 'added' ? '+ ' : '  '}
            {line.text}
            {'\n'}
          </span>
        ))}
      </pre>
    </>
  );
}

export function AgentPage({ id }: { id: string }) {
  const loaded = useResource(
    async (signal) => {
      const path = { params: { path: { agent: id } }, signal };
      const agent = await palai().GET('/v1/agents/{agent}', path);
      const revisions: AgentRevision[] = [];
      for (let after: string | undefined; ;) {
        const page = await palai().GET('/v1/agents/{agent}/revisions', {
          params: { path: { agent: id }, query: { limit: 100, ...(after ? { after } : {}) } },
          signal,
        });
        revisions.push(...page.data);
        if (!page.has_more || !page.last_id || revisions.length >= 1000) break;
        after = page.last_id;
      }
      revisions.sort((a, b) => a.revision - b.revision);
      return { agent, revisions };
    },
    [id],
  );
  const agent = loaded.data?.agent;
  const revisions = loaded.data?.revisions ?? [];
  const current = agent ? (revisions.find((revision) => revision.revision === agent.revision)?.spec ?? specOf(agent)) : undefined;

  return (
    <>
      <h1>{agent?.name ?? id}</h1>
      <ErrorAlert error={loaded.error} />
      {agent === undefined ? (
        !loaded.error && <Loading what="the agent" />
      ) : (
        <>
          <Facts
            facts={[
              ['Id', agent.id],
              ['Revision', `${agent.revision} (${agent.revision_id})`],
              ['Created', formatTime(agent.created_at)],
              ['Updated', formatTime(agent.updated_at)],
            ]}
          />
          <section aria-labelledby="agent-spec">
            <h2 id="agent-spec">Current spec</h2>
            <Json value={pretty(current)} label="Current spec" />
          </section>
          <section aria-labelledby="agent-revisions">
            <h2 id="agent-revisions">Revisions</h2>
            <TableWrap label="Revisions">
              <thead>
                <tr>
                  <th scope="col">Revision</th>
                  <th scope="col">Id</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {revisions.map((revision) => (
                  <tr key={revision.id}>
                    <td>{revision.revision}</td>
                    <td>{revision.id}</td>
                    <td>{formatTime(revision.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </TableWrap>
            {revisions.length > 0 && (
              <>
                <h3>Changes</h3>
                <RevisionDiff revisions={revisions} />
              </>
            )}
          </section>
        </>
      )}
    </>
  );
}
