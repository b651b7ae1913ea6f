// The one problem vocabulary. Each slug says what went wrong and what it means
// to the caller, in no transport's terms; every surface maps it once (HTTP:
// adapters/http/problem.ts; later JSON-RPC codes, MCP isError, Slack text).
// Slugs are stable: they become the `type` URI and clients may branch on them.

export const PROBLEM_TYPE_PREFIX = 'urn:palai:problem:';

/**
 * Whether sending the same request (message, job, click) again can help:
 *   never         it is wrong as it is and fails the same way every time;
 *   after-change  it can succeed once something else changes (a resource is
 *                 created, a state moves on, a credential or a setting is fixed);
 *   later         the failure is passing: the same request may succeed soon.
 */
export type Retry = 'never' | 'after-change' | 'later';

/** A problem's title (short, fixed), its meaning (what a caller should conclude) and whether a retry can help. */
export interface ProblemType {
  title: string;
  meaning: string;
  retry: Retry;
  /** Palai itself cannot serve anyone right now (its store, its start or its shutdown), whatever the request. */
  outage?: true;
}

export const problemTypes = {
  'malformed-json': {
    title: 'The request body is not valid JSON',
    meaning: 'The request is malformed; sending it again unchanged will fail the same way.',
    retry: 'never',
  },
  'validation-failed': {
    title: 'The request does not match the schema',
    meaning: 'The request is malformed: fields are missing, mistyped or out of range; fix them before retrying.',
    retry: 'never',
  },
  'invalid-request': {
    title: 'The request cannot be carried out as written',
    meaning: 'The request is well-formed but contradicts itself or what it refers to; it must be changed.',
    retry: 'after-change',
  },
  unauthorized: {
    title: 'A valid API key is required',
    meaning: 'The caller is not identified: no credential, or one that is unknown or revoked.',
    retry: 'after-change',
  },
  forbidden: {
    title: 'The API key may not do this',
    meaning: 'The caller is identified but lacks the permission; retrying with the same credential cannot help.',
    retry: 'after-change',
  },
  'egress-denied': {
    title: 'The destination may not be reached from this server',
    meaning: 'The request names an outbound address the server refuses to call; choose another destination.',
    retry: 'after-change',
  },
  'not-found': {
    title: 'No such resource',
    meaning: "The named resource does not exist in the caller's project (or was deleted).",
    retry: 'after-change',
  },
  'agent-not-found': {
    title: 'No such agent',
    meaning: "The named agent does not exist in the caller's project.",
    retry: 'after-change',
  },
  'method-not-allowed': {
    title: 'Method not allowed on this resource',
    meaning: 'The resource exists but does not support this operation; the allowed ones are listed.',
    retry: 'never',
  },
  'not-acceptable': {
    title: 'No acceptable representation',
    meaning: 'The server cannot answer in any of the representations the caller accepts.',
    retry: 'never',
  },
  conflict: {
    title: 'The resource already exists or changed',
    meaning: 'The request clashes with the current state (a name taken, a concurrent change); re-read, then decide.',
    retry: 'after-change',
  },
  'request-timeout': {
    title: 'The request was not received in time',
    meaning: 'The caller was too slow sending the request; sending it again promptly may succeed.',
    retry: 'later',
  },
  'payload-too-large': {
    title: 'The request body is too large',
    meaning: 'The request exceeds a size limit; it must be made smaller.',
    retry: 'never',
  },
  'unsupported-media-type': {
    title: 'The request body must be application/json',
    meaning: 'The request is encoded in a form the server does not read; send JSON, uncompressed or in a supported encoding.',
    retry: 'never',
  },
  'headers-too-large': {
    title: 'The request headers are too large',
    meaning: "The request's metadata exceeds a size limit; it must be made smaller.",
    retry: 'never',
  },
  'idempotency-conflict': {
    title: 'The Idempotency-Key was used with a different request',
    meaning: 'The idempotency key was already used for a different request; use a new key or resend the original request.',
    retry: 'never',
  },
  'model-provider-error': {
    title: 'The model provider answered with an error',
    meaning: 'An upstream model provider failed; the detail says whether retrying later may help.',
    retry: 'later',
  },
  'upstream-unavailable': {
    title: 'A server Palai calls could not be reached',
    meaning: 'A server Palai calls for the caller (an MCP server, say) did not answer, or answered with an error; retrying later may help.',
    retry: 'later',
  },
  'limit-exceeded': {
    title: "The run reached one of its agent's limits",
    meaning: 'The run stopped at a limit of its agent (steps, tokens, time, cost); retrying the same run will stop again.',
    retry: 'never',
  },
  'output-invalid': {
    title: "The output does not satisfy the agent's output schema",
    meaning: "The model's final output did not satisfy the agent's output schema.",
    retry: 'later',
  },
  'invalid-state': {
    title: 'The response is not in a state that allows this',
    meaning: 'The response is not in a state that allows this action (already ended, or waiting for something else).',
    retry: 'after-change',
  },
  'policy-hash-mismatch': {
    title: 'The hash is not the policy version it approves',
    meaning:
      "The approval names a hash other than the stored draft's (or the version is no longer a draft): re-read the policy, review it, and approve the hash shown.",
    retry: 'after-change',
  },
  'not-ready': {
    title: 'The service is not ready',
    meaning: 'The server is starting or degraded; retrying later can help.',
    retry: 'later',
    outage: true,
  },
  'store-busy': {
    title: 'The store is in use by another process',
    meaning: 'Another process holds the embedded store; stop it or use a shared database.',
    retry: 'later',
    outage: true,
  },
  'store-unavailable': {
    title: 'The database cannot be reached right now',
    meaning: 'The database is briefly unreachable; retrying shortly with the same idempotency key is safe.',
    retry: 'later',
    outage: true,
  },
  'shutting-down': {
    title: 'This server is shutting down',
    meaning: 'This server is stopping; retrying shortly (another server may answer) can help.',
    retry: 'later',
    outage: true,
  },
  internal: {
    title: 'Internal error',
    meaning: "An unexpected failure on the server's side; the server log has the details.",
    retry: 'later',
  },
} as const satisfies Record<string, ProblemType>;

export type ProblemSlug = keyof typeof problemTypes;

export function problemTypeUri(slug: ProblemSlug): string {
  return PROBLEM_TYPE_PREFIX + slug;
}

/** The problem slugs that are an outage of Palai's own. */
export const OUTAGE_SLUGS: ReadonlySet<ProblemSlug> = new Set(
  (Object.entries(problemTypes) as [ProblemSlug, ProblemType][]).filter(([, type]) => type.outage).map(([slug]) => slug),
);
