// Nodes: pairings that wait for a person, and every other node with its
// catalog and invocations.
import type { Node, NodeInvocation } from '@palai/sdk';
import { useState } from 'preact/hooks';
import { palai } from './api';
import { domId, formatTime, orDash } from './format';
import { useAction, useResource } from './hooks';
import { href } from './router';
import { ErrorAlert, Facts, Loading, TableWrap } from './ui';

function nodeName(node: Node): string {
  return node.display_name ?? node.aliases[0] ?? node.id;
}

function PendingNode({ node, onDone }: { node: Node; onDone: () => void }) {
  const action = useAction();
  const commands = node.catalog.commands.map((command) => command.name);
  // Every advertised command is offered for approval; a person may leave some out.
  const [allowed, setAllowed] = useState<Set<string>>(() => new Set(commands));
  const headingId = domId('pending', node.id);
  const path = () => ({ params: { path: { node: node.id } } });

  const toggle = (name: string, on: boolean) =>
    setAllowed((previous) => {
      const next = new Set(previous);
      if (on) next.add(name);
      else next.delete(name);
      return next;
    });
  const approve = async () => {
    const body = { allowed_commands: commands.filter((name) => allowed.has(name)) };
    if (await action.run(() => palai().POST('/v1/nodes/{node}/approve', { ...path(), body }))) onDone();
  };
  const deny = async () => {
    if (await action.run(() => palai().POST('/v1/nodes/{node}/deny', path()))) onDone();
  };

  return (
    <article class="card" aria-labelledby={headingId}>
      <h3 id={headingId}>{nodeName(node)}</h3>
      <Facts
        facts={[
          ['Id', node.id],
          ['Platform', `${node.platform} / ${node.architecture}`],
          ['Client', `${node.client_version} (protocol ${node.protocol_version})`],
          ['Catalog hash', <code>{node.catalog_hash}</code>],
          ['Asked', formatTime(node.created_at)],
        ]}
      />
      {commands.length > 0 && (
        <fieldset>
          <legend>Commands to allow</legend>
          {node.catalog.commands.map((command) => {
            const boxId = domId('allow', `${node.id}-${command.name}`);
            return (
              <div class="check" key={command.name}>
                <input id={boxId} type="checkbox" checked={allowed.has(command.name)} onChange={(event) => toggle(command.name, event.currentTarget.checked)} />
                <label for={boxId}>
                  {command.name} <span class="muted">({command.risk})</span>
                </label>
              </div>
            );
          })}
        </fieldset>
      )}
      <div class="buttons">
        <button type="button" class="primary" disabled={action.busy} onClick={() => void approve()}>
          Approve
        </button>
        <button type="button" class="danger" disabled={action.busy} onClick={() => void deny()}>
          Deny
        </button>
      </div>
      <ErrorAlert error={action.error} />
    </article>
  );
}

function Invocations({ invocations }: { invocations: NodeInvocation[] }) {
  if (invocations.length === 0) return <p class="muted">No invocations.</p>;
  return (
    <TableWrap>
      <thead>
        <tr>
          <th scope="col">Invocation</th>
          <th scope="col">Command</th>
          <th scope="col">State</th>
          <th scope="col">Response</th>
          <th scope="col">Exit code</th>
          <th scope="col">Failure</th>
          <th scope="col">Created</th>
          <th scope="col">Completed</th>
        </tr>
      </thead>
      <tbody>
        {invocations.map((invocation) => (
          <tr key={invocation.id}>
            <td>{invocation.id}</td>
            <td>{invocation.command}</td>
            <td>{invocation.state}</td>
            <td>
              <a href={href('runs', invocation.response_id)}>{invocation.response_id}</a>
            </td>
            <td>{orDash(invocation.exit_code)}</td>
            <td>{invocation.failure_code ? `${invocation.failure_code}${invocation.failure_message ? `: ${invocation.failure_message}` : ''}` : '—'}</td>
            <td>{formatTime(invocation.created_at)}</td>
            <td>{formatTime(invocation.completed_at)}</td>
          </tr>
        ))}
      </tbody>
    </TableWrap>
  );
}

function KnownNode({ node, invocations }: { node: Node; invocations: NodeInvocation[] }) {
  const headingId = domId('node', node.id);
  const usable = new Set(node.usable_commands);
  const changes = node.catalog_changes;
  const changed = changes.added.length + changes.removed.length + changes.changed.length > 0;
  return (
    <article class="card" aria-labelledby={headingId}>
      <h3 id={headingId}>{nodeName(node)}</h3>
      <Facts
        facts={[
          ['State', <span class={`status status-${node.state}`}>{node.state}</span>],
          ['Id', node.id],
          ['Aliases', node.aliases.length ? node.aliases.join(', ') : '—'],
          ['Platform', `${node.platform} / ${node.architecture}`],
          ['Last seen', formatTime(node.last_seen_at)],
          ...(node.disconnect_reason ? [['Disconnected', node.disconnect_reason] as [string, string]] : []),
          ...(node.revocation_reason ? [['Revoked', node.revocation_reason] as [string, string]] : []),
        ]}
      />
      {changed && (
        <p class="error-box">
          The catalog changed since it was approved: added {changes.added.join(', ') || 'none'}; removed {changes.removed.join(', ') || 'none'}; changed{' '}
          {changes.changed.join(', ') || 'none'}.
        </p>
      )}
      <h4>Commands</h4>
      {node.catalog.commands.length === 0 ? (
        <p class="muted">The node offers no commands.</p>
      ) : (
        <TableWrap>
          <thead>
            <tr>
              <th scope="col">Command</th>
              <th scope="col">Risk</th>
              <th scope="col">Usable</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {node.catalog.commands.map((command) => (
              <tr key={command.name}>
                <td>{command.name}</td>
                <td>{command.risk}</td>
                <td>{usable.has(command.name) ? 'yes' : 'no'}</td>
                <td>{orDash(command.description)}</td>
              </tr>
            ))}
          </tbody>
        </TableWrap>
      )}
      <details>
        <summary>Invocations ({invocations.length})</summary>
        <Invocations invocations={invocations} />
      </details>
    </article>
  );
}

export function NodesPage() {
  const loaded = useResource(
    async (signal) => {
      const [pending, all] = await Promise.all([
        palai().GET('/v1/nodes', { params: { query: { state: 'pending_pairing', limit: 100 } }, signal }),
        palai().GET('/v1/nodes', { params: { query: { limit: 100 } }, signal }),
      ]);
      const others = all.data.filter((node) => node.state !== 'pending_pairing');
      const known = await Promise.all(
        others.map(async (node) => {
          const page = await palai().GET('/v1/nodes/{node}/invocations', { params: { path: { node: node.id }, query: { limit: 50 } }, signal });
          return { node, invocations: page.data };
        }),
      );
      return { pending: pending.data, known };
    },
    [],
    3000,
  );

  return (
    <>
      <h1>Nodes</h1>
      <ErrorAlert error={loaded.error} />
      {loaded.data === undefined ? (
        !loaded.error && <Loading what="nodes" />
      ) : (
        <>
          <section aria-labelledby="nodes-pending">
            <h2 id="nodes-pending">Pending pairings</h2>
            {loaded.data.pending.length === 0 ? (
              <p class="muted">No node waits to be paired.</p>
            ) : (
              loaded.data.pending.map((node) => <PendingNode key={node.id} node={node} onDone={loaded.reload} />)
            )}
          </section>
          <section aria-labelledby="nodes-known">
            <h2 id="nodes-known">Connected nodes</h2>
            {loaded.data.known.length === 0 ? (
              <p class="muted">No paired nodes.</p>
            ) : (
              loaded.data.known.map(({ node, invocations }) => <KnownNode key={node.id} node={node} invocations={invocations} />)
            )}
          </section>
        </>
      )}
    </>
  );
}
