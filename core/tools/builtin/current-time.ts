import type { BuiltinTool } from '../tool-port.js';

export const currentTime: BuiltinTool = {
  name: 'current_time',
  description: 'The current date and time (UTC, ISO 8601).',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  risk: 'read',
  run: async () => ({ kind: 'output', output: new Date().toISOString() }),
};
