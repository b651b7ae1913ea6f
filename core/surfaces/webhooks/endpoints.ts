// Webhook endpoints: a project's receiver URLs. Each endpoint is kept as outbox
// subscriptions (consumer `webhook`, target = its id; one per agent when it is
// narrowed to agents), rewritten in the transaction of every change, so a status
// change is announced to exactly the endpoints enabled when it commits. Signing
// secrets live in the secret store; the row holds references, and the value is
// shown once, in the answer that made it.
import { randomBytes } from 'node:crypto';
import type {
  CreateWebhookEndpointRequest,
  ResponseStatus,
  RotateWebhookSecretRequest,
  UpdateWebhookEndpointRequest,
  WebhookEndpoint,
  WebhookEventType,
} from '../../../generated/schemas.js';
import { requireAgent } from '../../agents/agents.js';
import { PalaiError } from '../../errors/palai-error.js';
import { reserveKey, type IdempotencyClaim } from '../../idempotency/idempotency.js';
import { unixSeconds } from '../../json.js';
import { listSubscriptions, subscribe, unsubscribe } from '../../outbox/subscriptions.js';
import { fetchSize, toPage, type Page, type PageRequest } from '../../pagination.js';
import type { SecretStore } from '../../secrets/secret-port.js';
import { removeSealed, revealValues, sealValues, type Sealing } from '../../secrets/sealed-fields.js';
import type { Db, Queryable } from '../../store/db.js';
import { WEBHOOK_CONSUMER, WEBHOOK_EVENT_STATUSES, type WebhookSigningTarget } from './webhook-port.js';

export interface EndpointRow {
  id: string;
  project_id: string;
  url: string;
  description: string | null;
  events: WebhookEventType[];
  agents: string[] | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  secret_id: string;
  previous_secret_id: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** An endpoint's signing secrets, in the secret store. */
const SIGNING_SECRET: Sealing = {
  purpose: 'webhook-secret',
  noSecretKey: () =>
    new PalaiError('invalid-request', 'Webhook endpoints need PALAI_SECRET_KEY to be set on the server: their signing secrets are stored encrypted.'),
};
const DEFAULT_OVERLAP_SECONDS = 24 * 3600;
const EVENT_TYPES = new Set<string>([...Object.keys(WEBHOOK_EVENT_STATUSES), '*']);

export const endpointView = (row: EndpointRow, secret?: string): WebhookEndpoint => {
  const overlap =
    row.previous_secret_id && row.previous_secret_expires_at && row.previous_secret_expires_at > new Date() ? row.previous_secret_expires_at : null;
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    events: row.events,
    agents: row.agents,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    disabled_at: unixSeconds(row.disabled_at),
    ...(secret === undefined ? {} : { secret }),
    previous_secret_expires_at: unixSeconds(overlap),
    created_at: unixSeconds(row.created_at)!,
    updated_at: unixSeconds(row.updated_at)!,
  };
};

/** A fresh Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** Refuses what no receiver URL may be: not http(s), credentials in it (they would be sent, and shown to operators). */
export function checkEndpointUrl(url: string, pointer = '/url'): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PalaiError('invalid-request', 'The webhook URL is not a URL.', { errors: [{ pointer, detail: 'is not an absolute URL' }] });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new PalaiError('invalid-request', `A webhook URL must be http or https, not ${parsed.protocol.replace(/:$/, '')}.`, {
      errors: [{ pointer, detail: 'must use http or https' }],
    });
  }
  if (parsed.username || parsed.password) {
    throw new PalaiError('invalid-request', 'A webhook URL may not carry credentials; the receiver verifies the signature instead.', {
      errors: [{ pointer, detail: 'must not contain a user name or password' }],
    });
  }
  return parsed.href;
}

function checkEvents(events: string[], pointer = '/events'): WebhookEventType[] {
  const unknown = events.map((event, index) => ({ event, index })).filter(({ event }) => !EVENT_TYPES.has(event));
  if (unknown.length > 0) {
    throw new PalaiError(
      'invalid-request',
      `Unknown webhook event type(s) ${unknown.map((u) => JSON.stringify(u.event)).join(', ')}; use some of: ${[...EVENT_TYPES].join(', ')}.`,
      {
        errors: unknown.map(({ index }) => ({ pointer: `${pointer}/${index}`, detail: 'is not a webhook event type' })),
      },
    );
  }
  return [...new Set(events)] as WebhookEventType[];
}

/** The statuses the event types announce. */
export function statusesOf(events: readonly WebhookEventType[]): ResponseStatus[] {
  const types = events.includes('*') ? Object.keys(WEBHOOK_EVENT_STATUSES) : events;
  return [...new Set(types.flatMap((type) => [...WEBHOOK_EVENT_STATUSES[type as keyof typeof WEBHOOK_EVENT_STATUSES]]))];
}

async function agentIds(q: Queryable, projectId: string, refs: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const ref of refs) ids.push((await requireAgent(q, projectId, ref)).id);
  return [...new Set(ids)];
}

/** The endpoint's subscriptions, rewritten to match the row: none while it is disabled. */
async function syncSubscriptions(tx: Queryable, row: EndpointRow): Promise<void> {
  for (const existing of await listSubscriptions(tx, row.project_id, { consumer: WEBHOOK_CONSUMER, target: row.id })) {
    await unsubscribe(tx, row.project_id, existing.id);
  }
  if (!row.enabled) return;
  const statuses = statusesOf(row.events);
  for (const agentId of row.agents ?? [null]) {
    await subscribe(tx, { projectId: row.project_id, consumer: WEBHOOK_CONSUMER, target: row.id, statuses, agentId });
  }
}

const putSecret = async (tx: Queryable, secrets: SecretStore, projectId: string, value: string) =>
  (await sealValues(tx, secrets, projectId, SIGNING_SECRET, { value })).value;

export async function findEndpoint(q: Queryable, projectId: string, id: string, forUpdate = false): Promise<EndpointRow | null> {
  const { rows } = await q.query<EndpointRow>(`SELECT * FROM webhook_endpoints WHERE project_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [
    projectId,
    id,
  ]);
  return rows[0] ?? null;
}

export async function requireEndpoint(q: Queryable, projectId: string, id: string, forUpdate = false): Promise<EndpointRow> {
  const row = await findEndpoint(q, projectId, id, forUpdate);
  if (!row) throw new PalaiError('not-found', `No webhook endpoint with id ${JSON.stringify(id)} in this project.`);
  return row;
}

export async function createEndpoint(
  db: Db,
  secrets: SecretStore,
  projectId: string,
  request: CreateWebhookEndpointRequest,
  idem?: IdempotencyClaim,
): Promise<WebhookEndpoint> {
  const url = checkEndpointUrl(request.url);
  const events = checkEvents(request.events);
  return db.transaction(async (tx) => {
    const agents = request.agents ? await agentIds(tx, projectId, request.agents) : null;
    const secret = newSecret();
    const ref = await putSecret(tx, secrets, projectId, secret);
    const enabled = request.enabled ?? true;
    const { rows } = await tx.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, project_id, url, description, events, agents, enabled, secret_id)
       VALUES (palai_new_id('wh'), $1, $2, $3, $4::text[], $5::text[], $6, $7) RETURNING *`,
      [projectId, url, request.description ?? null, events, agents, enabled, ref.id],
    );
    const row = rows[0];
    // The answer holds the secret, so it is not recorded: a repeat answers with the endpoint alone.
    await reserveKey(tx, projectId, idem, row.id);
    await syncSubscriptions(tx, row);
    return endpointView(row, secret);
  });
}

export async function listEndpoints(q: Queryable, projectId: string, page: PageRequest): Promise<Page<WebhookEndpoint>> {
  const { rows } = await q.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE project_id = $1 AND ($2::text IS NULL OR id > $2) ORDER BY id LIMIT $3', [
    projectId,
    page.after ?? null,
    fetchSize(page),
  ]);
  return toPage(rows, page, (row) => endpointView(row));
}

export async function updateEndpoint(db: Db, projectId: string, id: string, request: UpdateWebhookEndpointRequest): Promise<WebhookEndpoint> {
  const url = request.url === undefined ? undefined : checkEndpointUrl(request.url);
  const events = request.events === undefined ? undefined : checkEvents(request.events);
  return db.transaction(async (tx) => {
    const row = await requireEndpoint(tx, projectId, id, true);
    const agents = request.agents === undefined ? row.agents : request.agents === null ? null : await agentIds(tx, projectId, request.agents);
    const enabled = request.enabled ?? row.enabled;
    const reenabled = enabled && !row.enabled;
    const { rows } = await tx.query<EndpointRow>(
      `UPDATE webhook_endpoints SET url = $3, description = $4, events = $5::text[], agents = $6::text[], enabled = $7,
         disabled_reason = CASE WHEN $7 THEN NULL ELSE disabled_reason END,
         disabled_at = CASE WHEN $7 THEN NULL WHEN $8 THEN disabled_at ELSE coalesce(disabled_at, now()) END,
         failing_since = CASE WHEN $9 THEN NULL ELSE failing_since END, updated_at = now()
       WHERE project_id = $1 AND id = $2 RETURNING *`,
      [
        projectId,
        id,
        url ?? row.url,
        request.description === undefined ? row.description : request.description,
        events ?? row.events,
        agents,
        enabled,
        !row.enabled,
        reenabled,
      ],
    );
    await syncSubscriptions(tx, rows[0]);
    return endpointView(rows[0]);
  });
}

/** Deletes the endpoint, its subscriptions and its secrets; deliveries already written end dead when attempted. */
export async function deleteEndpoint(db: Db, secrets: SecretStore, projectId: string, id: string): Promise<string> {
  return db.transaction(async (tx) => {
    const row = await requireEndpoint(tx, projectId, id, true);
    await tx.query('DELETE FROM webhook_endpoints WHERE id = $1', [row.id]);
    await syncSubscriptions(tx, { ...row, enabled: false });
    await removeSealed(tx, secrets, projectId, [row.secret_id, row.previous_secret_id]);
    return row.id;
  });
}

/**
 * A new secret; the current one becomes the previous one and keeps signing
 * beside it until the overlap ends (0: at once). A previous one still kept is dropped.
 */
export async function rotateSecret(
  db: Db,
  secrets: SecretStore,
  projectId: string,
  id: string,
  request: Partial<RotateWebhookSecretRequest> = {},
): Promise<WebhookEndpoint> {
  const overlapSeconds = request.expire_in_seconds ?? DEFAULT_OVERLAP_SECONDS;
  return db.transaction(async (tx) => {
    const row = await requireEndpoint(tx, projectId, id, true);
    await removeSealed(tx, secrets, projectId, [row.previous_secret_id]);
    const secret = newSecret();
    const ref = await putSecret(tx, secrets, projectId, secret);
    let previous: string | null = row.secret_id;
    if (overlapSeconds === 0) {
      await removeSealed(tx, secrets, projectId, [row.secret_id]);
      previous = null;
    }
    const { rows } = await tx.query<EndpointRow>(
      `UPDATE webhook_endpoints SET secret_id = $3, previous_secret_id = $4,
         previous_secret_expires_at = CASE WHEN $4::text IS NULL THEN NULL ELSE now() + make_interval(secs => $5) END, updated_at = now()
       WHERE project_id = $1 AND id = $2 RETURNING *`,
      [projectId, id, ref.id, previous, overlapSeconds],
    );
    return endpointView(rows[0], secret);
  });
}

/** Where and with what to sign one attempt; null when the endpoint no longer exists. */
export async function signingTarget(db: Db, secrets: SecretStore, projectId: string, id: string): Promise<WebhookSigningTarget | null> {
  const row = await findEndpoint(db, projectId, id);
  if (!row) return null;
  const overlapping = row.previous_secret_expires_at !== null && row.previous_secret_expires_at > new Date();
  const signing = await revealValues(db, secrets, projectId, { current: row.secret_id, previous: overlapping ? row.previous_secret_id : null });
  const values = signing.previous === null ? [signing.current] : [signing.current, signing.previous];
  return { endpointId: row.id, url: row.url, enabled: row.enabled, disabledReason: row.disabled_reason, secrets: values };
}

/** Disables the endpoint with the reason shown to its owner; its subscriptions go with it. False when it was already disabled or is gone. */
export async function disableEndpoint(db: Db, projectId: string, id: string, reason: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const row = await findEndpoint(tx, projectId, id, true);
    if (!row || !row.enabled) return false;
    const { rows } = await tx.query<EndpointRow>(
      `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $3, disabled_at = now(), updated_at = now()
       WHERE project_id = $1 AND id = $2 RETURNING *`,
      [projectId, id, reason.slice(0, 500)],
    );
    await syncSubscriptions(tx, rows[0]);
    return true;
  });
}
