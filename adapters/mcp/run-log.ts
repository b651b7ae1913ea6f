// A run's progress as MCP log notifications (notifications/message), for a
// host that set a level with logging/setLevel: the run started, a tool call
// proposed, a wait, its end. They come from the journal like progress does, so
// a resumed stream on another process says the same things.
import type { LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import type { JournalEntry } from '../../core/api/index.js';
import { MCP_LOG_LEVELS, type McpLogLevel } from '../../core/surfaces/mcp/mcp-sessions-port.js';
import type { KernelEvent } from '../../generated/protocol-schemas.js';

const LOGGER = 'palai';

const STATUS_LEVEL: Partial<Record<string, McpLogLevel>> = {
  queued: 'debug',
  in_progress: 'info',
  waiting_for_approval: 'notice',
  waiting_for_tool: 'notice',
  waiting_for_input: 'notice',
  parked: 'info',
  completed: 'info',
  failed: 'error',
  canceled: 'warning',
  timed_out: 'error',
  budget_exceeded: 'error',
};

/** What an event is worth saying, at which level; null for the rest (text as it streams, content parts). */
function logLineOf(event: KernelEvent): { level: McpLogLevel; message: string } | null {
  if (event.type === 'status') {
    const level = STATUS_LEVEL[event.status] ?? 'info';
    const message =
      event.status === 'in_progress' ? 'run started (or resumed)' : event.status === 'queued' ? 'run queued' : `run ${event.status.replace(/_/g, ' ')}`;
    return { level, message };
  }
  if (event.type === 'item.added') {
    const item = event.item as { type: string; name?: string };
    if (item.type === 'function_call') return { level: 'info', message: `tool call ${item.name ?? ''} proposed`.replace('  ', ' ') };
    if (item.type === 'mcp_approval_request') return { level: 'notice', message: `approval asked for ${item.name ?? 'a tool call'}` };
  }
  return null;
}

/** Whether a message at `level` passes the level the host set. */
export const passes = (level: McpLogLevel, threshold: McpLogLevel): boolean => MCP_LOG_LEVELS.indexOf(level) >= MCP_LOG_LEVELS.indexOf(threshold);

/** The log notification for one journal entry, or null when there is none at this threshold. */
export function logNotification(responseId: string, entry: JournalEntry, threshold: McpLogLevel | null): LoggingMessageNotification | null {
  if (threshold === null) return null;
  const line = logLineOf(entry.event);
  if (!line || !passes(line.level, threshold)) return null;
  return {
    method: 'notifications/message',
    params: {
      level: line.level,
      logger: LOGGER,
      data: {
        message: line.message,
        response_id: responseId,
        sequence: entry.sequence,
        ...(entry.event.type === 'status' ? { status: entry.event.status } : {}),
      },
    },
  };
}
