// Test helpers: a listening hub, and the official @a2a-js/sdk client pointed at
// one of its agents over a chosen binding, with the project's key on every call.
import { randomUUID } from 'node:crypto';
import { Role, type Message, type Part, type SendMessageRequest } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';

export type Binding = 'JSONRPC' | 'HTTP+JSON';
export const BINDINGS: Binding[] = ['JSONRPC', 'HTTP+JSON'];

export { listen, type Listening } from '../support/listen.js';

/** fetch with the bearer key on every request. */
export const keyedFetch =
  (apiKey: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${apiKey}`);
    return fetch(input, { ...init, headers });
  };

/** The SDK's ClientFactory, from the agent's card, preferring `binding`. */
export async function a2aClient(baseUrl: string, agent: string, apiKey: string, binding: Binding, options: { legacy?: boolean } = {}): Promise<Client> {
  const fetchImpl = keyedFetch(apiKey);
  const legacyCompat = options.legacy ? { enabled: true } : undefined;
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
    preferredTransports: [binding],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
  });
  return factory.createFromUrl(`${baseUrl}/a2a/${agent}/`);
}

export const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
export const data = (value: unknown): Part => ({ content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' });

export function userMessage(parts: Part[] | string, ids: Partial<Pick<Message, 'messageId' | 'contextId' | 'taskId'>> = {}): Message {
  return {
    messageId: ids.messageId ?? randomUUID(),
    contextId: ids.contextId ?? '',
    taskId: ids.taskId ?? '',
    role: Role.ROLE_USER,
    parts: typeof parts === 'string' ? [text(parts)] : parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export function send(message: Message, configuration: Partial<NonNullable<SendMessageRequest['configuration']>> = {}): SendMessageRequest {
  return {
    tenant: '',
    message,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false, ...configuration },
    metadata: undefined,
  };
}

/** The text of an artifact's or message's parts. */
export const partsText = (parts: Part[]): string => parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
