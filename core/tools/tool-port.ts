// The tool broker port: one shape for every tool kind (built-in, client-side
// function, and later MCP, A2A, remote HTTP, companion commands). Each call gets
// its idempotency key `<response_id>:<call_id>` so a tool can deduplicate a retry.
import type { ToolRisk } from '../../generated/schemas.js';

export type { ToolRisk };

export interface ToolCallContext {
  responseId: string;
  callId: string;
  /** `<response_id>:<call_id>`: the same on every retry of this call. */
  idempotencyKey: string;
  signal: AbortSignal;
}

/** What running a call produced: a result for the model, or a wait for someone. */
export type ToolOutcome =
  | { kind: 'output'; output: string }
  /** The caller runs this tool (client-side function): wait for its output. */
  | { kind: 'await_client' }
  /** Ask the human; their answer becomes the output. */
  | { kind: 'await_input'; question: string };

export interface ResolvedTool {
  name: string;
  kind: 'builtin' | 'function';
  description: string;
  /** JSON Schema of the arguments, as shown to the model. */
  parameters: Record<string, unknown>;
  risk: ToolRisk;
  /** Server-side tools validate arguments against `parameters` before running. */
  validateArguments: boolean;
  run(args: unknown, context: ToolCallContext): Promise<ToolOutcome>;
}

/** A tool failing is a result for the model, not a failure of the response. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}
