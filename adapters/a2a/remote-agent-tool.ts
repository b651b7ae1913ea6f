// Remote A2A agents as durable tools, for `{type: "a2a", remote_agent}` entries:
// the model sees a function `a2a__<name>` taking `{message}`, and a call is one
// task of the remote agent, made with the SDK's client through the egress guard.
//
//   first run    send the message (messageId: the call's idempotency key, so a
//                remote that deduplicates sees one message), commit the remote
//                task id as the call's checkpoint, then wait for the task
//   later run    (the worker died mid-call) read the task by its checkpointed id
//                and wait for it again: the message is never sent twice
//   input-required  the call parks as Palai's waiting_for_input with the remote
//                question; the human's answer comes back to this tool (resume),
//                which sends it to the same task and waits again
//
// The remote answer (its artifacts' text; a data part as its JSON) is the tool's
// output; a remote task that failed, was rejected or canceled is a tool error.
import type { A2aSurfaceApi, RemoteAgentConnection } from '../../core/surfaces/a2a/a2a-api.js';
import { isPalaiError } from '../../core/errors/palai-error.js';
import { ToolResolutionError, type ResolvedTool, type ToolOutcome, type ToolProvider } from '../../core/tools/tool-port.js';
import type { A2AToolSpec } from '../../generated/schemas.js';

export const TOOL_PREFIX = 'a2a__';
const MAX_MESSAGE_CHARS = 100_000;

const PARAMETERS = {
  type: 'object',
  properties: { message: { type: 'string', minLength: 1, maxLength: MAX_MESSAGE_CHARS, description: 'What to ask or tell the agent.' } },
  required: ['message'],
  additionalProperties: false,
} as const;

/** The provider of `a2a` tool entries; it reads remote agents (card, headers) through the kernel API. */
export function remoteAgentTools(api: A2aSurfaceApi): ToolProvider<A2AToolSpec> {
  return {
    kind: 'a2a',

    validateSpec(spec) {
      return /^[A-Za-z0-9][A-Za-z0-9_-]{0,58}$/.test(spec.remote_agent) ? null : 'remote_agent must name a remote agent (letters, digits, _ and -)';
    },

    async resolve(spec, resolveContext): Promise<ResolvedTool[]> {
      let connection: RemoteAgentConnection;
      try {
        connection = await api.remoteAgents.connection(resolveContext.projectId, spec.remote_agent);
      } catch (error) {
        if (isPalaiError(error)) throw new ToolResolutionError(`The remote agent ${JSON.stringify(spec.remote_agent)} cannot be used: ${error.message}`);
        throw error;
      }
      const { egress } = resolveContext;
      const cardDescription = typeof connection.card.description === 'string' ? connection.card.description : '';
      const name = `${TOOL_PREFIX}${connection.name}`;
      return [
        {
          name,
          kind: 'a2a',
          description: spec.description ?? (cardDescription || `Ask the remote agent ${connection.name}.`),
          parameters: PARAMETERS as unknown as Record<string, unknown>,
          risk: spec.risk ?? 'write',
          validateArguments: true,
          // The call (with the A2A SDK's client) is loaded with the first call.
          async run(args: { message: string }, context): Promise<ToolOutcome> {
            return (await import('./remote-call.js')).runRemoteCall(connection, egress, args, context);
          },
        },
      ];
    },
  };
}
