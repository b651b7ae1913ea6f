// The one problem vocabulary. Every surface maps a PalaiError through this table
// (HTTP: RFC 9457 problem+json; later JSON-RPC codes, MCP isError, Slack text).
// Slugs are stable: they become the `type` URI and clients may branch on them.

export const PROBLEM_TYPE_PREFIX = 'urn:palai:problem:';

export const problemTypes = {
  'malformed-json': { status: 400, title: 'The request body is not valid JSON' },
  'validation-failed': { status: 400, title: 'The request does not match the schema' },
  'invalid-request': { status: 400, title: 'The request cannot be carried out as written' },
  unauthorized: { status: 401, title: 'A valid API key is required' },
  forbidden: { status: 403, title: 'The API key may not do this' },
  'egress-denied': { status: 403, title: 'The destination may not be reached from this server' },
  'not-found': { status: 404, title: 'No such resource' },
  'agent-not-found': { status: 404, title: 'No such agent' },
  'method-not-allowed': { status: 405, title: 'Method not allowed on this resource' },
  'not-acceptable': { status: 406, title: 'No acceptable representation' },
  conflict: { status: 409, title: 'The resource already exists or changed' },
  'request-timeout': { status: 408, title: 'The request was not received in time' },
  'payload-too-large': { status: 413, title: 'The request body is too large' },
  'unsupported-media-type': { status: 415, title: 'The request body must be application/json' },
  'headers-too-large': { status: 431, title: 'The request headers are too large' },
  'idempotency-conflict': { status: 422, title: 'The Idempotency-Key was used with a different request' },
  'model-provider-error': { status: 502, title: 'The model provider answered with an error' },
  'limit-exceeded': { status: 422, title: "The run reached one of its agent's limits" },
  'output-invalid': { status: 422, title: "The output does not satisfy the agent's output schema" },
  'invalid-state': { status: 409, title: 'The response is not in a state that allows this' },
  'not-ready': { status: 503, title: 'The service is not ready' },
  'store-busy': { status: 503, title: 'The store is in use by another process' },
  'store-unavailable': { status: 503, title: 'The database cannot be reached right now' },
  'shutting-down': { status: 503, title: 'This server is shutting down' },
  internal: { status: 500, title: 'Internal error' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemSlug = keyof typeof problemTypes;

export function problemTypeUri(slug: ProblemSlug): string {
  return PROBLEM_TYPE_PREFIX + slug;
}
