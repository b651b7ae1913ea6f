// The built-in tools. Each declares a JSON Schema for its arguments (validated
// before it runs) and a default risk an agent spec may raise.
import type { EgressFetch } from '../../egress/egress-port.js';
import type { ToolOutcome, ToolCallContext, ToolRisk } from '../tool-port.js';
import { askUser } from './ask-user.js';
import { currentTime } from './current-time.js';
import { echo } from './echo.js';
import { httpPost } from './http-post.js';

export interface BuiltinDeps {
  /** The only way a built-in tool calls out: the kernel's egress-guarded fetch. */
  egress: EgressFetch;
}

export interface BuiltinTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  risk: ToolRisk;
  run(args: any, context: ToolCallContext, deps: BuiltinDeps): Promise<ToolOutcome>;
}

export const BUILTIN_TOOLS: ReadonlyMap<string, BuiltinTool> = new Map([askUser, currentTime, echo, httpPost].map((tool) => [tool.name, tool]));
