// Carries A2A push notifications out: the outbox hands over each announced
// status change of a task with a push config, and this POSTs it to the
// config's URL through the egress guard, as the A2A StreamResponse JSON the
// SDK's own sender posts — the task as it stands when the announced status is
// still its status, else a status update for the status announced — with the
// config's token (X-A2A-Notification-Token) and credentials (Authorization).
// A 2xx answer delivers it; anything else is retried by the outbox with backoff.
import { StreamResponse, type Task } from '@a2a-js/sdk';
import type { ResponseState } from '../../core/api/index.js';
import type { A2aSurfaceApi } from '../../core/surfaces/a2a/a2a-api.js';
import type { EgressFetch } from '../../core/egress/egress-port.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import type { DeliveryResult, OutboxConsumer, OutboxDelivery } from '../../core/outbox/outbox-port.js';
import { answerShape } from './answer-shape.js';
import { parseTarget, PUSH_CONSUMER, type PushTarget } from './push-configs.js';
import { TASK_STATE } from './task-state.js';
import { taskStatus, toTask } from './task-view.js';

const TIMEOUT_MS = 10_000;
export const TOKEN_HEADER = 'X-A2A-Notification-Token';
const CONTENT_TYPE = 'application/a2a+json';

class Gone extends Error {}

async function secret(api: A2aSurfaceApi, projectId: string, id: string | null): Promise<string | null> {
  if (id === null) return null;
  try {
    return await api.secrets.reveal(projectId, id);
  } catch (error) {
    if (isPalaiError(error) && error.slug === 'not-found') throw new Gone('the push notification config was deleted');
    throw error;
  }
}

async function body(api: A2aSurfaceApi, delivery: OutboxDelivery, state: ResponseState): Promise<string> {
  const announced = String(delivery.payload.status ?? '') as ResponseState['status'];
  if (announced !== state.status && announced in TASK_STATE) {
    const status = taskStatus({ ...state, status: announced, error: null, pending_calls: [] });
    return JSON.stringify(
      StreamResponse.toJSON({
        payload: {
          $case: 'statusUpdate',
          value: {
            taskId: state.id,
            contextId: state.session_id ?? '',
            status,
            metadata: { palai_status: announced, palai_sequence: delivery.payload.sequence },
          },
        },
      }),
    );
  }
  const agent = await api.agents.get(delivery.projectId, state.agent.id);
  const task: Task = toTask(state, { shape: await answerShape(api, delivery.projectId, agent, state), historyLength: 0 });
  return JSON.stringify(StreamResponse.toJSON({ payload: { $case: 'task', value: task } }));
}

export function a2aPushConsumer(api: A2aSurfaceApi, egress: EgressFetch): OutboxConsumer {
  return {
    name: PUSH_CONSUMER,
    async deliver(delivery, signal): Promise<DeliveryResult> {
      const target: PushTarget | null = parseTarget(delivery.target);
      if (!target || !delivery.responseId) return { kind: 'dead', error: 'not an A2A push notification config' };
      let state: ResponseState;
      let headers: Record<string, string>;
      try {
        state = await api.responses.get(delivery.projectId, delivery.responseId);
        const token = await secret(api, delivery.projectId, target.token_secret);
        const credentials = await secret(api, delivery.projectId, target.credentials_secret);
        headers = {
          'content-type': CONTENT_TYPE,
          'a2a-notification-id': delivery.id,
          ...(token !== null ? { [TOKEN_HEADER]: token } : {}),
          ...(credentials !== null && target.auth_scheme ? { authorization: `${target.auth_scheme} ${credentials}` } : {}),
        };
      } catch (error) {
        if (error instanceof Gone) return { kind: 'dead', error: error.message };
        if (isPalaiError(error) && error.slug === 'not-found') return { kind: 'dead', error: `task ${delivery.responseId} no longer exists` };
        throw error;
      }
      let response: Response;
      try {
        response = await egress(target.url, {
          method: 'POST',
          headers,
          body: await body(api, delivery, state),
          signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)]),
        });
      } catch (error) {
        const refused = isPalaiError(error) ? error : error instanceof Error && isPalaiError(error.cause) ? error.cause : null;
        if (refused?.slug === 'egress-denied') return { kind: 'dead', error: refused.message };
        return { kind: 'retry', error: `the receiver could not be reached: ${error instanceof Error ? error.message : String(error)}` };
      }
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return { kind: 'delivered' };
      if (response.status === 410) return { kind: 'dead', error: 'the receiver is gone (410)' };
      const retryAfter = Number(response.headers.get('retry-after'));
      return {
        kind: 'retry',
        error: `the receiver answered ${response.status}`,
        ...(response.status === 429 && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      };
    },
  };
}
