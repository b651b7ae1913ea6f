// What the MCP server surface reads of a project beyond the kernel API: its
// responses and sessions as one list of MCP resources, newest first, and the
// ids and agent names a host's completion asks for. Reads only; the caller's
// project always.

export type McpResourceKind = 'response' | 'session';

/** One response or session as resources/list shows it. */
export interface McpResourceRow {
  kind: McpResourceKind;
  id: string;
  /** The agent's name (a session not yet bound to one has none). */
  agentName: string | null;
  /** A response's status; null for a session. */
  status: string | null;
  /** Unix seconds. */
  createdAt: number;
}

export interface McpResourcePage {
  rows: McpResourceRow[];
  /** The id to pass as `after` for the next page; null on the last. */
  next: string | null;
}

/** At most this many completion values, as MCP allows in one answer. */
export const MAX_COMPLETION_VALUES = 100;

export interface McpResources {
  /** Responses and sessions together, newest first, after the resource with id `after` (a `resp_…` or `ses_…` id). */
  list(projectId: string, page: { after?: string; limit: number }): Promise<McpResourcePage>;
  /** Ids of this kind starting with `prefix`, newest first, at most MAX_COMPLETION_VALUES; and whether there are more. */
  completeIds(projectId: string, kind: McpResourceKind, prefix: string): Promise<{ values: string[]; hasMore: boolean }>;
  /** Agent names starting with `prefix`, in name order, at most MAX_COMPLETION_VALUES; and whether there are more. */
  completeAgentNames(projectId: string, prefix: string): Promise<{ values: string[]; hasMore: boolean }>;
}
