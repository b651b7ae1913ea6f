// Notifications: what needs a person's eyes is announced through the outbox
// to the webhook endpoints an objective's `notify` names — a wake that ended
// failed or waits for a person, an action whose outcome is uncertain, the
// objective blocked. A pass after each scheduler tick finds what is new and,
// in one transaction, writes the deliveries and marks it announced: each
// event is announced once, and the outbox carries it at least once.
import type { ObjectiveNotify } from '../../../generated/schemas.js';
import { PalaiError } from '../../errors/palai-error.js';
import { enqueueDelivery } from '../../outbox/deliveries.js';
import type { SessionNoticePayload, SessionNotices } from '../../outbox/session-notice-port.js';
import type { Db, Queryable } from '../../store/db.js';
import { ACTION_REASON, ACTION_STATUS } from './actions.js';

/** The webhook surface's outbox consumer: its endpoints are subscriptions of this consumer, and a direct delivery carries its own body. */
const WEBHOOK_CONSUMER = 'webhook';
/** Objectives one pass looks at, and the newest wakes of each. */
const OBJECTIVES_PER_PASS = 200;
const WAKES_LOOKED_AT = 20;
const ANNOUNCED_WAKE_STATUSES = ['failed', 'timed_out', 'budget_exceeded', 'waiting_for_approval', 'waiting_for_input'];

/** Where the objective's session is a thread (a Slack bot's), and whether to announce there when the request does not say. */
export interface NotifyThreads {
  sessionId: string | null;
  threads: readonly SessionNotices[];
  byDefault: boolean;
}

/** The threads an objective's session is the conversation of, as outbox deliveries' consumer and target. */
async function threadTargets(q: Queryable, projectId: string, sessionId: string | null, threads: readonly SessionNotices[]) {
  if (!sessionId) return [];
  const targets: { consumer: string; target: string }[] = [];
  for (const notices of threads) for (const target of await notices.targetsOf(q, projectId, sessionId)) targets.push({ consumer: notices.consumer, target });
  return targets;
}

/** The notify block as stored: every endpoint one of the project's webhook endpoints; a Slack thread only for a thread's session. */
export async function checkNotify(q: Queryable, projectId: string, notify: ObjectiveNotify, where: NotifyThreads): Promise<ObjectiveNotify> {
  const endpoints = notify.webhook_endpoints ?? [];
  const known = new Set<string>();
  if (endpoints.length > 0) {
    const { rows } = await q.query<{ target: string }>(
      'SELECT DISTINCT target FROM outbox_subscriptions WHERE project_id = $1 AND consumer = $2 AND target = ANY($3::text[])',
      [projectId, WEBHOOK_CONSUMER, endpoints],
    );
    for (const r of rows) known.add(r.target);
  }
  const index = endpoints.findIndex((id) => !known.has(id));
  if (index >= 0) {
    const pointer = `/notify/webhook_endpoints/${index}`;
    throw new PalaiError('invalid-request', `${endpoints[index]} is not a webhook endpoint of this project.`, {
      errors: [{ pointer, detail: 'is not a webhook endpoint of this project' }],
    });
  }
  const inThread = notify.slack_thread ?? (where.byDefault ? null : false);
  const threads = inThread === false ? [] : await threadTargets(q, projectId, where.sessionId, where.threads);
  if (inThread === true && threads.length === 0) {
    throw new PalaiError('invalid-request', "The objective's session is no Slack thread's conversation; there is no thread to announce in.", {
      errors: [{ pointer: '/notify/slack_thread', detail: "the objective's session is not a Slack thread's" }],
    });
  }
  return { ...(endpoints.length > 0 ? { webhook_endpoints: endpoints } : {}), ...(threads.length > 0 ? { slack_thread: true } : {}) };
}

interface NotifyingObjective {
  id: string;
  project_id: string;
  session_id: string | null;
  notify: ObjectiveNotify;
  status: string;
  blocked_reason: string | null;
  notified_block: string | null;
}

type Event = { type: string; objectiveId: string; responseId?: string; data: Record<string, string> };

/** The one line a thread shows for an event. */
function noticeText(event: Event): string {
  const what: Record<string, string> = {
    'objective.wake_failed': 'a wake failed',
    'objective.waiting': 'a wake waits for a person',
    'objective.action_uncertain': 'an action may have acted and needs settling',
    'objective.blocked': 'the objective is blocked',
  };
  return `Objective ${event.objectiveId}: ${what[event.type] ?? event.type}. ${event.data.reason ?? ''}`.trim();
}

async function send(tx: Queryable, objective: NotifyingObjective, event: Event, threads: readonly SessionNotices[]): Promise<void> {
  const data = { objective_id: event.objectiveId, ...(event.responseId ? { response_id: event.responseId } : {}), ...event.data };
  const payload = { type: event.type, timestamp: new Date().toISOString(), data };
  for (const target of objective.notify.webhook_endpoints ?? []) {
    await enqueueDelivery(tx, { projectId: objective.project_id, consumer: WEBHOOK_CONSUMER, target, responseId: event.responseId ?? null, payload });
  }
  if (!objective.notify.slack_thread) return;
  const notice: SessionNoticePayload = { type: event.type, text: noticeText(event), data };
  for (const { consumer, target } of await threadTargets(tx, objective.project_id, objective.session_id, threads)) {
    await enqueueDelivery(tx, { projectId: objective.project_id, consumer, target, responseId: event.responseId ?? null, payload: notice });
  }
}

/** One pass: what is new among the objectives with notifications, announced and marked. Answers how many events. */
export async function announcePending(db: Db, threads: readonly SessionNotices[] = []): Promise<number> {
  return db.transaction(async (tx) => {
    // Locked, skipping what a tick holds: the next pass takes it.
    // Only objectives with something new: a pass takes at most a batch of them, and the next the rest.
    const { rows: objectives } = await tx.query<NotifyingObjective>(
      `SELECT o.id, o.project_id, o.session_id, o.notify, o.status, o.blocked_reason, o.notified_block FROM objectives o
       WHERE o.notify <> '{}' AND (
         (o.status = 'blocked' AND o.blocked_reason IS DISTINCT FROM o.notified_block)
         OR (o.status <> 'blocked' AND o.notified_block IS NOT NULL)
         OR EXISTS (SELECT 1 FROM objective_actions a WHERE a.objective_id = o.id AND a.watching)
         OR EXISTS (SELECT 1 FROM (SELECT w.response_id, w.announced FROM objective_wakes w
                      WHERE w.objective_id = o.id AND w.outcome = 'admitted' ORDER BY w.due_at DESC LIMIT ${WAKES_LOOKED_AT}) w
                    JOIN responses r ON r.id = w.response_id WHERE r.status = ANY($1::text[]) AND w.announced IS DISTINCT FROM r.status))
       ORDER BY o.id LIMIT ${OBJECTIVES_PER_PASS} FOR UPDATE OF o SKIP LOCKED`,
      [ANNOUNCED_WAKE_STATUSES],
    );
    if (objectives.length === 0) return 0;
    const byId = new Map(objectives.map((o) => [o.id, o]));
    const ids = [...byId.keys()];
    let sent = 0;
    for (const objective of objectives) {
      const blocked = objective.status === 'blocked' ? objective.blocked_reason : null;
      if (blocked === objective.notified_block) continue;
      if (blocked !== null) {
        await send(tx, objective, { type: 'objective.blocked', objectiveId: objective.id, data: { reason: blocked } }, threads);
        sent++;
      }
      await tx.query('UPDATE objectives SET notified_block = $2 WHERE id = $1', [objective.id, blocked]);
    }
    const { rows: wakes } = await tx.query<{
      objective_id: string;
      trigger_id: string;
      due_at: Date;
      response_id: string;
      status: string;
      error: { message?: string } | null;
    }>(
      `SELECT w.objective_id, w.trigger_id, w.due_at, w.response_id, r.status, r.error
       FROM unnest($1::text[]) AS o(id)
       CROSS JOIN LATERAL (SELECT * FROM objective_wakes w WHERE w.objective_id = o.id AND w.outcome = 'admitted' ORDER BY w.due_at DESC LIMIT ${WAKES_LOOKED_AT}) w
       JOIN responses r ON r.id = w.response_id
       WHERE r.status = ANY($2::text[]) AND w.announced IS DISTINCT FROM r.status`,
      [ids, ANNOUNCED_WAKE_STATUSES],
    );
    for (const wake of wakes) {
      const waiting = wake.status.startsWith('waiting_for_');
      const reason = waiting
        ? `The wake waits for a person (${wake.status.replace(/_/g, ' ')}).`
        : `The wake ended ${wake.status}: ${wake.error?.message ?? 'no error given'}`;
      await send(
        tx,
        byId.get(wake.objective_id)!,
        {
          type: waiting ? 'objective.waiting' : 'objective.wake_failed',
          objectiveId: wake.objective_id,
          responseId: wake.response_id,
          data: { reason, status: wake.status },
        },
        threads,
      );
      await tx.query('UPDATE objective_wakes SET announced = $3 WHERE trigger_id = $1 AND due_at = $2', [wake.trigger_id, wake.due_at, wake.status]);
      sent++;
    }
    const { rows: actions } = await tx.query<{
      objective_id: string;
      response_id: string;
      call_id: string;
      tool: string;
      status: string;
      derived_reason: string | null;
    }>(
      `SELECT * FROM (SELECT a.objective_id, a.response_id, a.call_id, a.tool, ${ACTION_STATUS} AS status, ${ACTION_REASON} AS derived_reason
         FROM objective_actions a
         LEFT JOIN tool_calls t ON t.response_id = a.response_id AND t.call_id = a.call_id
         LEFT JOIN responses r ON r.id = a.response_id
         WHERE a.watching AND a.objective_id = ANY($1::text[])) x
       WHERE x.status IN ('uncertain', 'succeeded', 'failed', 'cancelled')`,
      [ids],
    );
    for (const action of actions) {
      if (action.status === 'uncertain') {
        const actionId = `${action.response_id}:${action.call_id}`;
        await send(
          tx,
          byId.get(action.objective_id)!,
          {
            type: 'objective.action_uncertain',
            objectiveId: action.objective_id,
            responseId: action.response_id,
            data: {
              reason: action.derived_reason ?? `${action.tool} may have acted; settle it with POST …/actions/${actionId}/resolve.`,
              action_id: actionId,
              tool: action.tool,
            },
          },
          threads,
        );
        sent++;
      }
      await tx.query('UPDATE objective_actions SET watching = false WHERE response_id = $1 AND call_id = $2', [action.response_id, action.call_id]);
    }
    return sent;
  });
}
