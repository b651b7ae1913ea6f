// Client-side functions, served for `{ type: 'function', ... }` entries: the
// caller runs them, so running one parks the call until its output is submitted.
import type { FunctionToolSpec } from '../../generated/schemas.js';
import type { ResolvedTool, ToolProvider } from './tool-port.js';

export const functionTools = {
  kind: 'function',

  async resolve(spec: FunctionToolSpec): Promise<ResolvedTool[]> {
    return [
      {
        name: spec.name,
        kind: 'function',
        description: spec.description ?? '',
        parameters: spec.parameters ?? { type: 'object', properties: {} },
        risk: spec.risk ?? 'read',
        // The caller runs the function; its arguments are checked only under `strict`.
        validateArguments: spec.strict === true && spec.parameters !== undefined,
        run: async () => ({ kind: 'await_client' }),
      },
    ];
  },
} as const satisfies ToolProvider<FunctionToolSpec>;
