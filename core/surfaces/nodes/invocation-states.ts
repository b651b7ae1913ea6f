// The invocation ledger's states as data. The diagram:
//
//   prepared → dispatched → accepted → running → succeeded | failed | canceled | unknown
//   prepared → expired (never sent: its time to live passed) | canceled (never sent)
//   prepared → failed (refused at once: COMMAND_UNAVAILABLE, NODE_BUSY, …)
//
// A sent invocation may end from any open state (the node answers, the node is
// revoked). Every ledger write names the states it moves from with these sets.
import type { NodeInvocationState } from '../../../generated/schemas.js';

export const OPEN_STATES = ['prepared', 'dispatched', 'accepted', 'running'] as const satisfies readonly NodeInvocationState[];
/** Sent to the node: a re-send after a reconnect sends these again. */
export const SENT_STATES = ['dispatched', 'accepted', 'running'] as const satisfies readonly NodeInvocationState[];
export const ENDED_STATES = ['succeeded', 'failed', 'canceled', 'unknown', 'expired'] as const satisfies readonly NodeInvocationState[];

const ENDINGS: NodeInvocationState[] = ['succeeded', 'failed', 'canceled', 'unknown'];

export const INVOCATION_TRANSITIONS: Record<NodeInvocationState, readonly NodeInvocationState[]> = {
  prepared: ['dispatched', 'expired', 'canceled', 'failed'],
  dispatched: ['accepted', 'running', 'dispatched', ...ENDINGS],
  accepted: ['running', ...ENDINGS],
  running: ['running', ...ENDINGS],
  succeeded: [],
  failed: [],
  canceled: [],
  unknown: [],
  expired: [],
};

export const isOpen = (state: NodeInvocationState): boolean => (OPEN_STATES as readonly string[]).includes(state);
export const canMove = (from: NodeInvocationState, to: NodeInvocationState): boolean => INVOCATION_TRANSITIONS[from].includes(to);
