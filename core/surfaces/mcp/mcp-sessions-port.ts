// The MCP session port: what the MCP surface keeps between the requests of one
// host's session, held by the kernel's store so that any Palai process serves
// any session. A session belongs to the project (and key) that opened it; the
// calls it started map its JSON-RPC request ids to the responses they made.

/** The session a host opened with `initialize`. */
export interface McpSession {
  id: string;
  projectId: string;
  keyId: string;
  /** The protocol version negotiated at initialize; every later request must speak it. */
  protocolVersion: string;
  clientInfo: Record<string, unknown>;
  /** What the host said it can do (elicitation, tasks, …), as it sent it. */
  clientCapabilities: Record<string, unknown>;
  /** The level the host set with logging/setLevel; null until it does (no log notifications meanwhile). */
  logLevel: McpLogLevel | null;
}

/** MCP's log levels (RFC 5424's), least severe first. */
export const MCP_LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];

/** How many resources one session may watch at once: a bound on what a host can make the store keep. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1_000;

export type NewMcpSession = Omit<McpSession, 'id' | 'logLevel'>;

/** A tools/call of a session and the response it started. */
export interface McpSessionCall {
  sessionId: string;
  /** The JSON-RPC request id as its JSON text (`"a"` and `1` differ). */
  requestKey: string;
  responseId: string;
  /** The caller's progress token, when it asked for progress. */
  progressToken: string | number | null;
  /** True when the call was task-augmented (its answer was the task, not the result). */
  task: boolean;
}

export interface McpSessions {
  /** Stores a new session and returns it with its id (unguessable; it is sent in every request). */
  open(session: NewMcpSession): Promise<McpSession>;
  /** The project's live session, marked used; null when unknown, ended, idle too long or another project's. */
  use(projectId: string, sessionId: string): Promise<McpSession | null>;
  /** Ends the session (DELETE) and drops its subscriptions; false when there was no live one. */
  end(projectId: string, sessionId: string): Promise<boolean>;
  /** Remembers which response a call started; the first record for a request id wins. */
  recordCall(call: McpSessionCall): Promise<McpSessionCall>;
  callByRequest(sessionId: string, requestKey: string): Promise<McpSessionCall | null>;
  callByResponse(sessionId: string, responseId: string): Promise<McpSessionCall | null>;
  /** Sets the session's log level (logging/setLevel). */
  setLogLevel(sessionId: string, level: McpLogLevel): Promise<void>;
  /**
   * Watches a resource (its URI) for the session; subscribing twice is one subscription.
   * False when the session watches MAX_SUBSCRIPTIONS_PER_SESSION others already.
   */
  subscribe(sessionId: string, uri: string): Promise<boolean>;
  /** False when the session did not watch it. */
  unsubscribe(sessionId: string, uri: string): Promise<boolean>;
  /** The URIs the live session watches; null once it ended (or went stale), when its streams should end. */
  subscriptions(projectId: string, sessionId: string): Promise<string[] | null>;
  /** Deletes sessions long ended or idle, with their calls; they are ignored already, so this only keeps the table small. */
  purgeStale(): Promise<number>;
}
