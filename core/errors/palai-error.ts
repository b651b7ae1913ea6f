import { OUTAGE_SLUGS, problemTypes, type ProblemSlug, type Retry } from './problem-types.js';

/** One offending location of a rejected request (RFC 6901 pointer). */
export interface FieldError {
  pointer: string;
  detail: string;
}

/** The kernel's one error class; surfaces translate it, never its message text. */
export class PalaiError extends Error {
  readonly slug: ProblemSlug;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  /** Extra problem members, e.g. `allow` for method-not-allowed. */
  readonly extensions: Record<string, unknown>;

  constructor(slug: ProblemSlug, detail?: string, options: { errors?: FieldError[]; extensions?: Record<string, unknown>; cause?: unknown } = {}) {
    const entry = problemTypes[slug];
    super(detail ?? entry.title, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PalaiError';
    this.slug = slug;
    this.title = entry.title;
    this.errors = options.errors;
    this.extensions = options.extensions ?? {};
  }
}

export const isPalaiError = (error: unknown): error is PalaiError => error instanceof PalaiError;

/**
 * Whether sending the same request, message or job again can help, as the
 * problem registry says; an error that is not a PalaiError is unexpected, and
 * an unexpected failure may pass (`later`, as for `internal`).
 */
export function retryOf(error: unknown): Retry {
  return isPalaiError(error) ? problemTypes[error.slug].retry : 'later';
}

/** Palai's own outage (its store, its start, its shutdown): work must wait for it, and it says nothing of the request. */
export const isOutage = (error: unknown): boolean => isPalaiError(error) && OUTAGE_SLUGS.has(error.slug);

export function notFound(kind: string, id: string): PalaiError {
  return new PalaiError('not-found', `No ${kind} with id ${JSON.stringify(id)} in this project.`);
}
