// An agent's A2A card, built from its spec: name, description, the revision as
// the version, one skill, the bearer scheme, and the two bindings at their URLs
// under /a2a/{agent}/, each at A2A 1.0 and again at 0.3 for older clients.
import { AgentCard, type AgentInterface } from '@a2a-js/sdk';
import type { Agent } from '../../generated/schemas.js';

/** Where each binding is served, under the agent's own path. */
export const JSONRPC_PATH = '/jsonrpc';
export const REST_PATH = '/rest';
/** Agent metadata that makes its card readable without a key, fetched by the agent's id. */
export const PUBLIC_CARD_KEY = 'a2a_card';
export const PUBLIC_CARD_VALUE = 'public';

const VERSIONS = ['1.0', '0.3'] as const;

function interfaces(agentUrl: string): AgentInterface[] {
  return VERSIONS.flatMap((protocolVersion) => [
    { url: agentUrl + JSONRPC_PATH, protocolBinding: 'JSONRPC', tenant: '', protocolVersion },
    { url: agentUrl + REST_PATH, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion },
  ]);
}

/** True when the agent's owner asked for its card to be public. */
export const hasPublicCard = (agent: Agent): boolean => agent.metadata[PUBLIC_CARD_KEY] === PUBLIC_CARD_VALUE;

/**
 * What the SDK's transports read from "the" card: the bindings and versions
 * they accept and the capabilities they check. Every Palai agent has the same,
 * so one card serves every agent's calls; its URLs are never shown to anyone.
 */
export const BINDINGS_CARD: AgentCard = cardFor(
  { name: 'palai', description: '', revision: 1, output_schema: undefined } as unknown as Agent,
  'http://palai.invalid/a2a/agent',
);

/** `agentUrl` is the absolute URL of /a2a/{agent} as the caller reached it. */
export function cardFor(agent: Agent, agentUrl: string): AgentCard {
  const description = agent.description ?? `The Palai agent ${agent.name}.`;
  const outputModes = agent.output_schema ? ['application/json'] : ['text/plain'];
  return {
    name: agent.name,
    description,
    supportedInterfaces: interfaces(agentUrl),
    provider: undefined,
    version: String(agent.revision),
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'A Palai project API key.', scheme: 'Bearer', bearerFormat: 'palai_sk_…' } } },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain', 'application/json'],
    defaultOutputModes: outputModes,
    skills: [{ id: agent.name, name: agent.name, description, tags: ['palai'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
}

/**
 * The card as the SDK's card handler wants it: the object itself (its v0.3
 * translation reads the fields), serialized in the A2A JSON form (its v1.0
 * answer is JSON.stringify of what it is given).
 */
export function servedCard(card: AgentCard): AgentCard {
  return Object.assign(structuredClone(card), { toJSON: () => AgentCard.toJSON(card) });
}
