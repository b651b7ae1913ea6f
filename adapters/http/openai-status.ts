// The one table that maps Palai's kernel statuses onto OpenAI's vocabulary.
// By default the REST surface speaks OpenAI's, so the SDKs' typed models and
// stream helpers work: a response that waits for its caller has done what it
// can, so it reads `completed`, with what it waits for among its output items.
// A response parked on an outside party still works for its caller: `in_progress`.
// Clients that opt in (`Palai-Events: extended`) get Palai's own status events.
import { isTerminal, type ResponseStatus } from '../../core/api/index.js';
import type { OpenAIResponseStatus, ResponseLifecycleEvent } from '../../generated/schemas.js';

type LifecycleEventType = ResponseLifecycleEvent['type'];

export type EventVocabulary = 'openai' | 'extended';

export interface StatusProjection {
  /** The response object's `status`. */
  status: OpenAIResponseStatus;
  /** The stream event announcing it on the default stream: only events the SDKs handle. */
  event: LifecycleEventType;
  /** The stream event announcing it when the client asked for Palai's events. */
  extendedEvent: LifecycleEventType;
}

export const STATUS_PROJECTION: Readonly<Record<ResponseStatus, StatusProjection>> = {
  queued: { status: 'queued', event: 'response.created', extendedEvent: 'response.created' },
  in_progress: { status: 'in_progress', event: 'response.in_progress', extendedEvent: 'response.in_progress' },
  waiting_for_approval: { status: 'completed', event: 'response.completed', extendedEvent: 'response.waiting_for_approval' },
  waiting_for_tool: { status: 'completed', event: 'response.completed', extendedEvent: 'response.waiting_for_tool' },
  waiting_for_input: { status: 'completed', event: 'response.completed', extendedEvent: 'response.waiting_for_input' },
  parked: { status: 'in_progress', event: 'response.in_progress', extendedEvent: 'response.in_progress' },
  completed: { status: 'completed', event: 'response.completed', extendedEvent: 'response.completed' },
  failed: { status: 'failed', event: 'response.failed', extendedEvent: 'response.failed' },
  // The SDKs know no `response.cancelled` event; `incomplete` is the one that says "ended unfinished".
  canceled: { status: 'cancelled', event: 'response.incomplete', extendedEvent: 'response.cancelled' },
  timed_out: { status: 'incomplete', event: 'response.incomplete', extendedEvent: 'response.incomplete' },
  budget_exceeded: { status: 'incomplete', event: 'response.incomplete', extendedEvent: 'response.incomplete' },
};

export function statusEvent(status: ResponseStatus, vocabulary: EventVocabulary): LifecycleEventType {
  const projection = STATUS_PROJECTION[status];
  return vocabulary === 'extended' ? projection.extendedEvent : projection.event;
}

/**
 * The events that end a response's stream in Palai's vocabulary: exactly one per
 * response. (On the default stream `response.completed` also stands for a wait.)
 */
export const TERMINAL_EXTENDED_EVENTS: ReadonlySet<LifecycleEventType> = new Set(
  (Object.keys(STATUS_PROJECTION) as ResponseStatus[]).filter(isTerminal).map((status) => STATUS_PROJECTION[status].extendedEvent),
);
