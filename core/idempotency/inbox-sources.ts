// The inbox's sources: each has its own key space and its own name for the key,
// used in the messages its users read (an idempotency-conflict names it). A wing
// declares its source once, beside its own code (the queue wing in queue-port.ts,
// the Slack wing in slack-bots-port.ts, A2A and MCP in their binders); the inbox
// refuses a source nobody declared. The REST API has no wing: it is the kernel
// API's own projection, so its source is declared here.
import type { InboxSource } from './inbox-port.js';
import { SourceRegistry } from './source-registry.js';

const sources = new SourceRegistry<{ keyTerm: string }>('inbox source', (a, b) => a.keyTerm === b.keyTerm);

/**
 * Declares a source and the name its users know the key by ("Idempotency-Key",
 * "messageId"); answers with the source, for the wing to use in its identities.
 */
export function declareInboxSource(name: string, keyTerm: string): InboxSource {
  if (keyTerm.trim() === '') throw new RangeError(`inbox source ${JSON.stringify(name)} needs the name its users know the key by`);
  return sources.declare(name, { keyTerm });
}

/** The key's name in a declared source's own terms; an undeclared source is a RangeError. */
export const inboxKeyTerm = (source: InboxSource): string => sources.require(source).keyTerm;

/** Every declared source, for operators and tests. */
export const declaredInboxSources = (): string[] => sources.names();

/** The REST API's Idempotency-Key header. */
export const HTTP_INBOX_SOURCE = declareInboxSource('http', 'Idempotency-Key');
