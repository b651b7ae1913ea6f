import type { BuiltinTool } from '../tool-port.js';

/** Suspends the response (waiting_for_input) until someone answers the question. */
export const askUser: BuiltinTool = {
  name: 'ask_user',
  description: 'Ask the user a question and wait for their answer.',
  parameters: {
    type: 'object',
    properties: { question: { type: 'string', minLength: 1, maxLength: 4000 } },
    required: ['question'],
    additionalProperties: false,
  },
  risk: 'read',
  run: async (args: { question: string }) => ({ kind: 'await_input', question: args.question }),
};
