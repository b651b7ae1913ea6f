import { problemTypes, type ProblemSlug } from './problem-types.js';

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

  constructor(slug: ProblemSlug, detail?: string, options: { errors?: FieldError[]; extensions?: Record<string, unknown> } = {}) {
    const entry = problemTypes[slug];
    super(detail ?? entry.title);
    this.name = 'PalaiError';
    this.slug = slug;
    this.title = entry.title;
    this.errors = options.errors;
    this.extensions = options.extensions ?? {};
  }
}

export const isPalaiError = (error: unknown): error is PalaiError => error instanceof PalaiError;

export function notFound(kind: string, id: string): PalaiError {
  return new PalaiError('not-found', `No ${kind} with id ${JSON.stringify(id)} in this project.`);
}
