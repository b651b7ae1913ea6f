// A2A push-notification configs, kept as outbox subscriptions: consumer
// `a2a_push`, narrowed to the task's response, announcing every status change.
// The subscription's target is the config itself (its id, URL, and references
// to its token and credentials, which live in the secret store), so the
// consumer needs nothing else to deliver, on any process, after any restart.
// Token and credentials are write-only: a config read back shows neither.
import type { AuthenticationInfo, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { randomUUID } from 'node:crypto';
import type { ResponseState } from '../../core/api/index.js';
import type { A2aSurfaceApi } from '../../core/surfaces/a2a/a2a-api.js';
import { TERMINAL_STATUSES, WAITING_STATUSES } from '../../core/api/index.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import { PUSH_CONSUMER } from './push-consumer-name.js';

export { PUSH_CONSUMER };
const SECRET_PURPOSE = 'a2a-push-credential';
/** Every status a task goes through is announced, but parked: the task is still working (its state would not change). */
const ANNOUNCED = ['queued', 'in_progress', ...WAITING_STATUSES, ...TERMINAL_STATUSES];
const MAX_URL = 2000;
const MAX_TOKEN = 4096;
const MAX_CONFIGS_PER_TASK = 10;

/** What a subscription's target holds. */
export interface PushTarget {
  id: string;
  task_id: string;
  url: string;
  /** Secret references, never the values. */
  token_secret: string | null;
  auth_scheme: string | null;
  credentials_secret: string | null;
}

export function parseTarget(target: string): PushTarget | null {
  try {
    const value = JSON.parse(target) as PushTarget;
    return typeof value?.url === 'string' && typeof value.id === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** The config as a client sees it: its token and credentials are never shown again. */
function view(target: PushTarget): TaskPushNotificationConfig {
  const authentication: AuthenticationInfo | undefined = target.auth_scheme ? { scheme: target.auth_scheme, credentials: '' } : undefined;
  return { tenant: '', id: target.id, taskId: target.task_id, url: target.url, token: '', authentication };
}

function validate(config: TaskPushNotificationConfig): void {
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw new RequestMalformedError('The push notification url is not a URL.');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || config.url.length > MAX_URL) {
    throw new RequestMalformedError(`The push notification url must be an http(s) URL of at most ${MAX_URL} characters.`);
  }
  if ((config.token ?? '').length > MAX_TOKEN) throw new RequestMalformedError(`The push notification token is longer than ${MAX_TOKEN} characters.`);
  const auth = config.authentication;
  if (auth && (auth.scheme.length > 64 || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]*$/.test(auth.scheme) || auth.credentials.length > MAX_TOKEN)) {
    throw new RequestMalformedError(
      'The push notification authentication needs a scheme (an HTTP auth scheme name) and credentials of at most 4096 characters.',
    );
  }
  if (auth && (auth.scheme === '') !== (auth.credentials === ''))
    throw new RequestMalformedError('The push notification authentication needs both a scheme and credentials.');
  if ((config.id ?? '').length > 200) throw new RequestMalformedError('The push notification config id is longer than 200 characters.');
}

export class PushConfigs {
  constructor(private readonly api: A2aSurfaceApi) {}

  private async subscriptions(projectId: string, taskId: string) {
    const all = await this.api.outbox.subscriptions(projectId, { consumer: PUSH_CONSUMER });
    return all
      .filter((s) => s.responseId === taskId)
      .flatMap((s) => {
        const target = parseTarget(s.target);
        return target ? [{ subscription: s, target }] : [];
      });
  }

  private async seal(projectId: string, value: string): Promise<string | null> {
    if (value === '') return null;
    try {
      return (await this.api.secrets.put(projectId, SECRET_PURPOSE, value)).id;
    } catch (error) {
      if (isPalaiError(error) && error.slug === 'invalid-request') {
        throw new RequestMalformedError(
          'This server keeps no push notification tokens or credentials: it runs without PALAI_SECRET_KEY. Leave them out, or ask the operator.',
        );
      }
      throw error;
    }
  }

  /** Creates the config (replacing one of the same id on the task); answers it as stored. */
  async create(projectId: string, task: ResponseState, config: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    validate(config);
    const id = config.id || randomUUID();
    const existing = await this.subscriptions(projectId, task.id);
    const same = existing.find((e) => e.target.id === id);
    if (!same && existing.length >= MAX_CONFIGS_PER_TASK)
      throw new RequestMalformedError(`A task has at most ${MAX_CONFIGS_PER_TASK} push notification configs.`);
    const target: PushTarget = {
      id,
      task_id: task.id,
      url: config.url,
      token_secret: await this.seal(projectId, config.token ?? ''),
      auth_scheme: config.authentication?.scheme || null,
      credentials_secret: await this.seal(projectId, config.authentication?.credentials ?? ''),
    };
    await this.api.outbox.subscribe({
      projectId,
      consumer: PUSH_CONSUMER,
      target: JSON.stringify(target),
      statuses: ANNOUNCED as ResponseState['status'][],
      responseId: task.id,
      agentId: task.agent.id,
    });
    if (same) await this.remove(projectId, same);
    return view(target);
  }

  /**
   * Announces the task as it stands now, once: a config given with the message
   * that started the task is subscribed just after admission, and the run may
   * have moved on (or ended) in between.
   */
  async announceCurrent(projectId: string, task: ResponseState, config: TaskPushNotificationConfig): Promise<void> {
    const target = (await this.subscriptions(projectId, task.id)).find((e) => e.target.id === config.id);
    if (!target) return;
    const current = await this.api.responses.get(projectId, task.id);
    const sequence = await this.api.responses.lastSequence(projectId, task.id);
    await this.api.outbox.enqueue({
      projectId,
      consumer: PUSH_CONSUMER,
      target: target.subscription.target,
      responseId: task.id,
      eventSequence: null,
      payload: { response_id: task.id, sequence, status: current.status },
    });
  }

  async get(projectId: string, taskId: string, id: string): Promise<TaskPushNotificationConfig | null> {
    const found = (await this.subscriptions(projectId, taskId)).find((e) => e.target.id === id);
    return found ? view(found.target) : null;
  }

  async list(projectId: string, taskId: string): Promise<TaskPushNotificationConfig[]> {
    return (await this.subscriptions(projectId, taskId)).map((e) => view(e.target));
  }

  /** False when the task has no config of that id. */
  async delete(projectId: string, taskId: string, id: string): Promise<boolean> {
    const found = (await this.subscriptions(projectId, taskId)).find((e) => e.target.id === id);
    if (!found) return false;
    await this.remove(projectId, found);
    return true;
  }

  private async remove(projectId: string, entry: { subscription: { id: string }; target: PushTarget }): Promise<void> {
    await this.api.outbox.unsubscribe(projectId, entry.subscription.id);
    // Deliveries already written find their secrets gone and end dead: the config was deleted.
    for (const secret of [entry.target.token_secret, entry.target.credentials_secret]) if (secret) await this.api.secrets.remove(projectId, secret);
  }
}
