// Objectives: the list, and one objective's triggers, wakes (admitted and
// skipped), action journal and policies.
import { palai } from './api';
import { formatTime, orDash, pretty } from './format';
import { useResource } from './hooks';
import { href } from './router';
import { ErrorAlert, Facts, Json, Loading, TableWrap } from './ui';

export function ObjectivesPage() {
  const objectives = useResource((signal) => palai().GET('/v1/objectives', { params: { query: { limit: 100 } }, signal }), [], 5000);

  return (
    <>
      <h1>Objectives</h1>
      <ErrorAlert error={objectives.error} />
      {objectives.data === undefined ? (
        !objectives.error && <Loading what="objectives" />
      ) : objectives.data.data.length === 0 ? (
        <p class="muted">No objectives.</p>
      ) : (
        <TableWrap label="Objectives">
          <thead>
            <tr>
              <th scope="col">Objective</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col">Priority</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {objectives.data.data.map((objective) => (
              <tr key={objective.id}>
                <td>
                  <a href={href('objectives', objective.id)}>{objective.description || objective.id}</a>
                </td>
                <td>
                  <span class={`status status-${objective.status}`}>{objective.status}</span>
                  {objective.blocked_reason ? <span class="muted"> · {objective.blocked_reason}</span> : null}
                </td>
                <td>
                  <a href={href('agents', objective.agent_id)}>{objective.agent_id}</a>
                </td>
                <td>{objective.priority}</td>
                <td>{formatTime(objective.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
    </>
  );
}

function RunLink({ id }: { id: string | null }) {
  return id ? <a href={href('runs', id)}>{id}</a> : <>—</>;
}

export function ObjectivePage({ id }: { id: string }) {
  const loaded = useResource(
    async (signal) => {
      const path = { objective: id };
      const [objective, triggers, wakes, actions, policies] = await Promise.all([
        palai().GET('/v1/objectives/{objective}', { params: { path }, signal }),
        palai().GET('/v1/objectives/{objective}/triggers', { params: { path }, signal }),
        palai().GET('/v1/objectives/{objective}/wakes', { params: { path, query: { limit: 100 } }, signal }),
        palai().GET('/v1/objectives/{objective}/actions', { params: { path, query: { limit: 100 } }, signal }),
        palai().GET('/v1/objectives/{objective}/policies', { params: { path }, signal }),
      ]);
      return { objective, triggers: triggers.data, wakes: wakes.data, actions: actions.data, policies: policies.data };
    },
    [id],
    5000,
  );
  const data = loaded.data;
  const objective = data?.objective;

  return (
    <>
      <h1>{objective ? objective.description || objective.id : id}</h1>
      <ErrorAlert error={loaded.error} />
      {data === undefined || objective === undefined ? (
        !loaded.error && <Loading what="the objective" />
      ) : (
        <>
          <Facts
            facts={[
              ['Id', objective.id],
              ['Status', <span class={`status status-${objective.status}`}>{objective.status}</span>],
              ['Blocked because', orDash(objective.blocked_reason)],
              ['Agent', <a href={href('agents', objective.agent_id)}>{objective.agent_id}</a>],
              ['Session', objective.session_id ? <a href={href('sessions', objective.session_id)}>{objective.session_id}</a> : `— (${objective.session_mode})`],
              ['Success criteria', orDash(objective.success_criteria)],
              [
                'Policy',
                objective.policy
                  ? `version ${objective.policy.version} (${objective.policy.hash}), expires ${formatTime(objective.policy.expires_at)}`
                  : 'none approved',
              ],
              ['Last wake', <RunLink id={objective.last_wake_response_id ?? null} />],
              ['Actions in period', objective.pace_state.actions_in_period],
              ['Failed wakes in a row', objective.pace_state.failed_wakes],
              ['Next wake not before', formatTime(objective.pace_state.next_wake_not_before)],
              ['Completed with', orDash(objective.completed_evidence)],
            ]}
          />
          <section aria-labelledby="objective-triggers">
            <h2 id="objective-triggers">Triggers</h2>
            {data.triggers.length === 0 ? (
              <p class="muted">No triggers.</p>
            ) : (
              <TableWrap label="Triggers">
                <thead>
                  <tr>
                    <th scope="col">Trigger</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Schedule</th>
                    <th scope="col">Status</th>
                    <th scope="col">Next due</th>
                    <th scope="col">Last fired</th>
                    <th scope="col">Skipped</th>
                    <th scope="col">Reason</th>
                  </tr>
                </thead>
                <tbody>
                  {data.triggers.map((trigger) => (
                    <tr key={trigger.id}>
                      <td>{trigger.id}</td>
                      <td>{trigger.kind}</td>
                      <td>{trigger.cron ? `${trigger.cron} (${trigger.timezone ?? 'UTC'}), missed: ${trigger.missed_run_policy}` : '—'}</td>
                      <td>{trigger.status}</td>
                      <td>{formatTime(trigger.next_due_at)}</td>
                      <td>{formatTime(trigger.last_fired_at)}</td>
                      <td>
                        {trigger.skipped_count}
                        {trigger.last_skip_reason ? ` (last: ${trigger.last_skip_reason})` : ''}
                      </td>
                      <td>{orDash(trigger.reason)}</td>
                    </tr>
                  ))}
                </tbody>
              </TableWrap>
            )}
          </section>
          <section aria-labelledby="objective-wakes">
            <h2 id="objective-wakes">Wakes</h2>
            {data.wakes.length === 0 ? (
              <p class="muted">No wakes yet.</p>
            ) : (
              <TableWrap label="Wakes">
                <thead>
                  <tr>
                    <th scope="col">Due</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Trigger</th>
                    <th scope="col">Response</th>
                    <th scope="col">Recorded</th>
                  </tr>
                </thead>
                <tbody>
                  {data.wakes.map((wake) => (
                    <tr key={`${wake.trigger_id}-${wake.due_at}-${wake.created_at}`}>
                      <td>{formatTime(wake.due_at)}</td>
                      <td>
                        <span class={`status status-${wake.outcome}`}>{wake.outcome}</span>
                      </td>
                      <td>{orDash(wake.reason)}</td>
                      <td>{wake.trigger_id}</td>
                      <td>
                        <RunLink id={wake.response_id} />
                      </td>
                      <td>{formatTime(wake.created_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </TableWrap>
            )}
          </section>
          <section aria-labelledby="objective-actions">
            <h2 id="objective-actions">Actions</h2>
            {data.actions.length === 0 ? (
              <p class="muted">No actions yet.</p>
            ) : (
              <TableWrap label="Actions">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Tool</th>
                    <th scope="col">Target</th>
                    <th scope="col">Class</th>
                    <th scope="col">Verdict</th>
                    <th scope="col">Status</th>
                    <th scope="col">Rule / reason</th>
                    <th scope="col">Wake</th>
                    <th scope="col">Request</th>
                  </tr>
                </thead>
                <tbody>
                  {data.actions.map((action) => (
                    <tr key={action.id}>
                      <td>{formatTime(action.created_at)}</td>
                      <td>
                        {action.tool} <span class="muted">({action.kind})</span>
                      </td>
                      <td>{action.target ? `${action.target_type ?? ''} ${action.target}`.trim() : '—'}</td>
                      <td>{action.class}</td>
                      <td>
                        <span class={`status status-${action.verdict}`}>{action.verdict}</span>
                      </td>
                      <td>
                        {action.status}
                        {action.resolved ? ` (settled by a person${action.evidence ? `: ${action.evidence}` : ''})` : ''}
                      </td>
                      <td>{[action.rule, action.reason].filter(Boolean).join(': ') || '—'}</td>
                      <td>
                        <RunLink id={action.response_id} />
                      </td>
                      <td>
                        <details>
                          <summary>Arguments</summary>
                          <Json value={pretty(action.request)} />
                        </details>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </TableWrap>
            )}
          </section>
          <section aria-labelledby="objective-policies">
            <h2 id="objective-policies">Policies</h2>
            {data.policies.length === 0 ? (
              <p class="muted">No policy proposed yet.</p>
            ) : (
              <ol class="cards">
                {data.policies.map((policy) => (
                  <li key={policy.version} class="card">
                    <h3>
                      Version {policy.version} <span class={`status status-${policy.status}`}>{policy.status}</span>
                    </h3>
                    <Facts
                      facts={[
                        ['Hash', <code>{policy.hash}</code>],
                        ['Proposed', formatTime(policy.created_at)],
                        ['Approved', formatTime(policy.approved_at)],
                        ['Revoked', formatTime(policy.revoked_at)],
                        ['Expires', formatTime(policy.expires_at)],
                      ]}
                    />
                    <details>
                      <summary>Document</summary>
                      <Json value={pretty(policy.document)} />
                    </details>
                  </li>
                ))}
              </ol>
            )}
          </section>
        </>
      )}
    </>
  );
}
