// Sessions that are threads elsewhere: a surface whose conversations live in
// another product's threads (a Slack bot's) tells the kernel which outbox
// targets stand for a session's threads, and carries what is posted to them as
// an outbox consumer of its own. A wing that announces something about a
// session (an objective's notifications) writes one delivery per target, in
// its own transaction, without knowing the surface.
import type { Queryable } from '../store/db.js';

/** What a delivery to a session's thread carries: one line for people, and the event it is about. */
export type SessionNoticePayload = {
  type: string;
  text: string;
  data: Record<string, string>;
};

export interface SessionNotices {
  /** The outbox consumer that posts to the threads. */
  readonly consumer: string;
  /** The targets (for `consumer`) of the threads this session is the conversation of; none when it is no thread's. */
  targetsOf(q: Queryable, projectId: string, sessionId: string): Promise<string[]>;
}
