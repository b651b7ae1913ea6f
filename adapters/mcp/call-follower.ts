// Follows a response's journal until the tools/call (or tasks/result) that waits
// on it can be answered: each journal event becomes a progress notification
// when the host asked for progress, each wait for a person an elicitation when
// the host can answer one, each step worth a log line a log notification when
// the host set a level (run-log.ts), and the end the result. Everything comes from the
// journal, so a resumed stream on another process sends the same thing.
import type { CallToolResult, JSONRPCNotification } from '@modelcontextprotocol/sdk/types.js';
import { isTerminal, isWaiting, type JournalEntry, type ResponseState } from '../../core/api/index.js';
import type { McpSurfaceApi } from '../../core/surfaces/mcp/mcp-api.js';
import type { McpSession } from '../../core/surfaces/mcp/mcp-sessions-port.js';
import type { KernelEvent } from '../../generated/protocol-schemas.js';
import { callResult } from './call-result.js';
import { canElicit, elicitationsFor } from './elicitation.js';
import { eventId } from './event-ids.js';
import type { RequestStream } from './request-stream.js';
import { logNotification } from './run-log.js';

export interface FollowTarget {
  api: McpSurfaceApi;
  projectId: string;
  session: McpSession;
  stream: RequestStream;
  signal: AbortSignal;
  /** The tool advertises an output schema: the answer is structured. */
  structured: boolean;
  /** Progress goes out only when the host sent a token. */
  progressToken?: string | number | null;
  /**
   * Set for tasks/result: a wait is not an answer (the result is the task's end),
   * and elicitations name the task they belong to.
   */
  taskId?: string;
}

/** A few words a host can show for one journal event. */
export function describeEvent(event: KernelEvent): string {
  switch (event.type) {
    case 'status':
      return event.status.replace(/_/g, ' ');
    case 'item.added':
    case 'item.done':
    case 'item.updated': {
      const item = event.item as { type: string; name?: string };
      const what = item.type === 'function_call' ? `tool call ${item.name ?? ''}`.trim() : item.type.replace(/_/g, ' ');
      return `${what} ${event.type === 'item.added' ? 'started' : event.type === 'item.done' ? 'done' : 'updated'}`;
    }
    case 'content.added':
    case 'content.done':
      return 'writing';
    case 'text.delta':
      return event.delta;
    case 'text.done':
      return 'text done';
    default: {
      const unknown: never = event;
      throw new Error(`unknown kernel event ${JSON.stringify(unknown)}`);
    }
  }
}

function progress(target: FollowTarget, entry: JournalEntry): JSONRPCNotification {
  return {
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: target.progressToken!, progress: entry.sequence + 1, message: describeEvent(entry.event) },
  };
}

/**
 * From journal sequence `after` (the host has seen everything up to it) to the
 * answer. Resolves to null when the host went away (the run goes on; the host
 * may resume or poll).
 */
export async function followToResult(target: FollowTarget, responseId: string, after: number): Promise<CallToolResult | null> {
  const { api, projectId, stream, signal } = target;
  // One event back: a reader positioned on a trailing wait would otherwise sit
  // until the next event, and never ask the question that wait is about.
  let last = Math.max(-1, after - 1);
  let elicited = -2;
  for (;;) {
    for await (const entry of api.responses.follow(projectId, responseId, { after: last, signal })) {
      last = entry.sequence;
      if (entry.sequence <= after) continue;
      const id = eventId({ responseId, sequence: last });
      const log = logNotification(responseId, entry, target.session.logLevel);
      if (log) stream.event({ jsonrpc: '2.0', ...log }, id);
      if (target.progressToken !== undefined && target.progressToken !== null) stream.event(progress(target, entry), id);
    }
    if (signal.aborted || stream.closed) return null;
    // The kernel's state now: at least as new as the journal read so far.
    const state: ResponseState = await api.responses.get(projectId, responseId);
    if (isTerminal(state.status)) return callResult(state, target.structured);
    if (!isWaiting(state.status)) continue;
    const asks = canElicit(target.session) && stream.streaming ? elicitationsFor(state, target.taskId) : [];
    if (asks.length === 0 && target.taskId === undefined) return callResult(state, target.structured);
    // Asked once per wait; the host's answer (to any process) moves the journal on.
    if (elicited !== last) for (const ask of asks) stream.event(ask, eventId({ responseId, sequence: last }));
    elicited = last;
  }
}
