// What a surface reads from the journal: kernel events (generated from
// protocols/kernel-events.schema.json) with their gap-free sequence. Every
// projection — REST SSE, A2A, MCP, Slack, webhooks — maps these into its own
// vocabulary; none of them parses another surface's shapes.
import type { KernelEvent, ResponseState } from '../../generated/protocol-schemas.js';
import { isTerminal, isWaiting } from '../response-status.js';

export type { KernelEvent, ResponseState };

/** One journaled event of a response. */
export interface JournalEntry {
  /** Gap-free within the response, from 0; resume after any sequence seen. */
  sequence: number;
  event: KernelEvent;
}

/** Where a project-wide feed stands; opaque to callers. */
export type FeedCursor = string;

/** The status event that ends a response: exactly one per response, the last one. */
export const isTerminalEvent = (event: KernelEvent): boolean => event.type === 'status' && isTerminal(event.status);

/** A status event saying the response now waits for someone outside the run. */
export const isWaitingEvent = (event: KernelEvent): boolean => event.type === 'status' && isWaiting(event.status);
