import type { BuiltinTool } from '../tool-port.js';

/** Returns its input: a harmless tool for demos and conformance runs. */
export const echo: BuiltinTool = {
  name: 'echo',
  description: 'Return the given text unchanged.',
  parameters: {
    type: 'object',
    properties: { text: { type: 'string', maxLength: 100000 } },
    required: ['text'],
    additionalProperties: false,
  },
  risk: 'read',
  run: async (args: { text: string }) => ({ kind: 'output', output: args.text }),
};
