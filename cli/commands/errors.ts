// How a failed command is reported: one human line on stderr (plus the field
// errors of a rejected document), never a stack trace, then exit 1.
import { ConfigError } from '../../core/config.js';
import { PalaiError } from '../../core/errors/palai-error.js';

/** A failure the command already phrased for its user. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly details: string[] = [],
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The message of any thrown value; node's AggregateError (e.g. a refused dual-stack connect) has an empty one. */
export function messageOf(error: unknown): string {
  if (error instanceof AggregateError && !error.message) {
    return [...new Set(error.errors.map(messageOf))].join('; ') || 'unknown error';
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

export function errorLines(error: unknown): string[] {
  if (error instanceof CliError) return [error.message, ...error.details.map((d) => `  ${d}`)];
  if (error instanceof ConfigError) return [`Invalid configuration: ${error.message}`];
  if (error instanceof PalaiError) {
    return [error.message, ...(error.errors ?? []).map((e) => `  ${e.pointer || '(document)'}: ${e.detail}`)];
  }
  return [messageOf(error)];
}
