// The built-in tools, served for `{ type: 'builtin', name }` entries. They are
// known without calling out, so an agent naming one that does not exist is
// refused when it is created, not when it first runs.
import type { BuiltinToolSpec } from '../../../generated/schemas.js';
import { ToolResolutionError, type BuiltinTool, type ResolvedTool, type ToolProvider, type ToolResolveContext } from '../tool-port.js';
import { askUser } from './ask-user.js';
import { currentTime } from './current-time.js';
import { echo } from './echo.js';
import { httpPost } from './http-post.js';

const BUILTIN_TOOLS: ReadonlyMap<string, BuiltinTool> = new Map([askUser, currentTime, echo, httpPost].map((tool) => [tool.name, tool]));

export const builtinTools = {
  kind: 'builtin',

  validateSpec(spec: BuiltinToolSpec): string | null {
    if (BUILTIN_TOOLS.has(spec.name)) return null;
    return `no built-in tool is named ${JSON.stringify(spec.name)}; known: ${[...BUILTIN_TOOLS.keys()].join(', ')}`;
  },

  async resolve(spec: BuiltinToolSpec, context: ToolResolveContext): Promise<ResolvedTool[]> {
    const builtin = BUILTIN_TOOLS.get(spec.name);
    if (!builtin) throw new ToolResolutionError(builtinTools.validateSpec(spec)!);
    const deps = { egress: context.egress };
    return [
      {
        name: builtin.name,
        kind: 'builtin',
        description: builtin.description,
        parameters: builtin.parameters,
        // The agent spec may set the risk its approval policy sees.
        risk: spec.risk ?? builtin.risk,
        validateArguments: true,
        ...(builtin.target ? { target: builtin.target } : {}),
        run: (args, callContext) => builtin.run(args, callContext, deps),
      },
    ];
  },
} as const satisfies ToolProvider<BuiltinToolSpec>;
