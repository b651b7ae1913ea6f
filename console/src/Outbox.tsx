// Every outbound delivery of the project (webhooks, A2A push notifications,
// queue results): where it goes, how it stands, and Redeliver for one that is
// delivered or dead. Payloads are not shown; the API does not answer them.
import type { OutboxDelivery } from '@palai/sdk';
import { palai } from './api';
import { formatTime, orDash } from './format';
import { useAction, useResource } from './hooks';
import { href } from './router';
import { ErrorAlert, Loading, TableWrap } from './ui';

function OutboxRow({ delivery, onDone }: { delivery: OutboxDelivery; onDone: () => void }) {
  const action = useAction();
  const redeliver = async () => {
    if (await action.run(() => palai().POST('/v1/outbox_deliveries/{delivery}/redeliver', { params: { path: { delivery: delivery.id } } }))) onDone();
  };
  return (
    <tr>
      <td>
        {delivery.id}
        {delivery.response_id && (
          <>
            {' '}
            (<a href={href('runs', delivery.response_id)}>{delivery.response_id}</a>)
          </>
        )}
      </td>
      <td>{delivery.consumer}</td>
      <td>{delivery.target}</td>
      <td>
        <span class={`status status-${delivery.status}`}>{delivery.status}</span>
      </td>
      <td>{delivery.attempts}</td>
      <td>{orDash(delivery.last_error)}</td>
      <td>{formatTime(delivery.status === 'pending' ? delivery.next_attempt_at : (delivery.delivered_at ?? delivery.dead_at))}</td>
      <td>
        {delivery.status === 'pending' ? (
          <span class="muted">being tried</span>
        ) : (
          <button type="button" disabled={action.busy} onClick={() => void redeliver()}>
            Redeliver
          </button>
        )}
        <ErrorAlert error={action.error} />
      </td>
    </tr>
  );
}

export function OutboxSection() {
  const page = useResource((signal) => palai().GET('/v1/outbox_deliveries', { params: { query: { limit: 100 } }, signal }), [], 5000);
  return (
    <section class="card" aria-labelledby="outbox-heading">
      <h2 id="outbox-heading">All outbound deliveries</h2>
      <ErrorAlert error={page.error} />
      {page.data === undefined ? (
        !page.error && <Loading what="deliveries" />
      ) : page.data.data.length === 0 ? (
        <p class="muted">No deliveries yet.</p>
      ) : (
        <TableWrap label="All outbound deliveries">
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Kind</th>
              <th scope="col">Target</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Next try, delivered or dead</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {page.data.data.map((delivery) => (
              <OutboxRow key={delivery.id} delivery={delivery} onDone={page.reload} />
            ))}
          </tbody>
        </TableWrap>
      )}
    </section>
  );
}
