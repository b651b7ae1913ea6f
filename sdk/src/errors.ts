// What a failed call throws. Palai answers every HTTP error as an RFC 9457
// problem (docs/errors.md); PalaiApiError carries it whole, with OpenAI's
// `error` member beside it, so code can branch on the slug or the status.
import type { OpenAIErrorMember, Problem, ProblemFieldError } from './generated/schemas.js';

const PROBLEM_PREFIX = 'urn:palai:problem:';

/** The slug of a problem type URI (`urn:palai:problem:not-found` → `not-found`); other URIs as they are. */
export function problemSlug(type: string): string {
  return type.startsWith(PROBLEM_PREFIX) ? type.slice(PROBLEM_PREFIX.length) : type;
}

/** An HTTP answer of 4xx or 5xx, with its problem. */
export class PalaiApiError extends Error {
  override readonly name = 'PalaiApiError';
  readonly status: number;
  /** The problem type URI, e.g. `urn:palai:problem:validation-failed`. */
  readonly type: string;
  /** The registry's slug of `type`, e.g. `validation-failed`. */
  readonly slug: string;
  readonly title: string;
  readonly detail: string | undefined;
  /** One entry per offending field (validation problems), else empty. */
  readonly errors: ProblemFieldError[];
  /** The same problem in OpenAI's error shape, when the server sent it. */
  readonly error: OpenAIErrorMember | undefined;
  /** On `store-unavailable` and `shutting-down`: the response the request had already admitted. */
  readonly responseId: string | undefined;
  /** The problem body as received (extension members included). */
  readonly problem: Problem;
  readonly headers: Headers;

  constructor(status: number, problem: Problem, headers: Headers = new Headers()) {
    super(problem.detail ?? problem.title);
    this.status = status;
    this.problem = problem;
    this.type = problem.type;
    this.slug = problemSlug(problem.type);
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.error = problem.error;
    this.responseId = problem.response_id;
    this.headers = headers;
  }

  /** The error of an answer that is not 2xx; a body that is not a problem (a proxy's page) becomes one. */
  static fromBody(response: Response, body: unknown): PalaiApiError {
    return new PalaiApiError(response.status, asProblem(response, body), response.headers);
  }

  /** Reads the body of an answer that is not 2xx. */
  static async fromResponse(response: Response): Promise<PalaiApiError> {
    const text = await response.text().catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: kept as text for the detail.
    }
    return PalaiApiError.fromBody(response, body);
  }
}

function asProblem(response: Response, body: unknown): Problem {
  if (isProblem(body)) return body;
  const detail = typeof body === 'string' && body.trim() ? body.trim().slice(0, 500) : undefined;
  return { type: 'about:blank', title: response.statusText || `HTTP ${response.status}`, status: response.status, ...(detail ? { detail } : {}) };
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const { type, title, status } = body as Record<string, unknown>;
  return typeof type === 'string' && typeof title === 'string' && typeof status === 'number';
}

/** The server could not be reached, or the connection broke, after the retries allowed. */
export class PalaiConnectionError extends Error {
  override readonly name = 'PalaiConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
