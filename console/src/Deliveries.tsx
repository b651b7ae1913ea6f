// Deliveries: each webhook endpoint with its deliveries and their attempts,
// then every outbound delivery of any kind; a delivered or dead one can be sent again.
import type { WebhookDelivery, WebhookEndpoint } from '@palai/sdk';
import { palai } from './api';
import { domId, formatTime, orDash } from './format';
import { useAction, useResource } from './hooks';
import { OutboxSection } from './Outbox';
import { href } from './router';
import { ErrorAlert, Loading, TableWrap } from './ui';

function DeliveryRow({ delivery, onDone }: { delivery: WebhookDelivery; onDone: () => void }) {
  const action = useAction();
  const redeliver = async () => {
    const path = { endpoint: delivery.endpoint_id, delivery: delivery.id };
    if (await action.run(() => palai().POST('/v1/webhook_endpoints/{endpoint}/deliveries/{delivery}/resend', { params: { path } }))) onDone();
  };
  return (
    <tr>
      <td>
        <details>
          <summary>{delivery.id}</summary>
          {delivery.response_id && (
            <p>
              Response <a href={href('runs', delivery.response_id)}>{delivery.response_id}</a>
            </p>
          )}
          {delivery.attempts.length === 0 ? (
            <p class="muted">No attempt yet{delivery.next_attempt_at ? `; the first at ${formatTime(delivery.next_attempt_at)}` : ''}.</p>
          ) : (
            <table class="attempts">
              <thead>
                <tr>
                  <th scope="col">attempt</th>
                  <th scope="col">status_code</th>
                  <th scope="col">latency_ms</th>
                  <th scope="col">error</th>
                  <th scope="col">next_attempt_at</th>
                  <th scope="col">created_at</th>
                </tr>
              </thead>
              <tbody>
                {delivery.attempts.map((attempt) => (
                  <tr key={attempt.attempt}>
                    <td>{attempt.attempt}</td>
                    <td>{orDash(attempt.status_code)}</td>
                    <td>{attempt.latency_ms}</td>
                    <td>{orDash(attempt.error)}</td>
                    <td>{formatTime(attempt.next_attempt_at)}</td>
                    <td>{formatTime(attempt.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </details>
      </td>
      <td>{delivery.event_type}</td>
      <td>
        <span class={`status status-${delivery.status}`}>{delivery.status}</span>
      </td>
      <td>{delivery.attempts.length}</td>
      <td>{orDash(delivery.last_error)}</td>
      <td>{formatTime(delivery.created_at)}</td>
      <td>
        <button type="button" disabled={action.busy} onClick={() => void redeliver()}>
          Redeliver
        </button>
        <ErrorAlert error={action.error} />
      </td>
    </tr>
  );
}

function EndpointSection({ endpoint, deliveries, onDone }: { endpoint: WebhookEndpoint; deliveries: WebhookDelivery[]; onDone: () => void }) {
  const headingId = domId('endpoint', endpoint.id);
  return (
    <section class="card" aria-labelledby={headingId}>
      <h2 id={headingId} class="id-heading">
        {endpoint.url}
      </h2>
      <p class="muted">
        {endpoint.id} · {endpoint.enabled ? 'enabled' : `disabled${endpoint.disabled_reason ? `: ${endpoint.disabled_reason}` : ''}`} · events{' '}
        {endpoint.events.join(', ')}
        {endpoint.description ? ` · ${endpoint.description}` : ''}
      </p>
      {deliveries.length === 0 ? (
        <p class="muted">No deliveries yet.</p>
      ) : (
        <TableWrap label={`Deliveries to ${endpoint.url}`}>
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Event type</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Created</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <DeliveryRow key={delivery.id} delivery={delivery} onDone={onDone} />
            ))}
          </tbody>
        </TableWrap>
      )}
    </section>
  );
}

export function DeliveriesPage() {
  const loaded = useResource(
    async (signal) => {
      const endpoints = await palai().GET('/v1/webhook_endpoints', { params: { query: { limit: 100 } }, signal });
      return Promise.all(
        endpoints.data.map(async (endpoint) => {
          const page = await palai().GET('/v1/webhook_endpoints/{endpoint}/deliveries', {
            params: { path: { endpoint: endpoint.id }, query: { limit: 100 } },
            signal,
          });
          return { endpoint, deliveries: page.data };
        }),
      );
    },
    [],
    5000,
  );

  return (
    <>
      <h1>Deliveries</h1>
      <ErrorAlert error={loaded.error} />
      {loaded.data === undefined ? (
        !loaded.error && <Loading what="webhook endpoints" />
      ) : loaded.data.length === 0 ? (
        <p class="muted">No webhook endpoints.</p>
      ) : (
        loaded.data.map(({ endpoint, deliveries }) => <EndpointSection key={endpoint.id} endpoint={endpoint} deliveries={deliveries} onDone={loaded.reload} />)
      )}
      <OutboxSection />
    </>
  );
}
