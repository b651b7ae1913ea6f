// How a plan binds a secret environment value without holding it: the hub
// computes it when it prepares the plan and again before it sends the value,
// the companion when it receives it; all three must agree.
import { createHash } from 'node:crypto';

/** `sha256:` and the hex SHA-256 of the value's UTF-8 bytes. */
export const secretDigest = (value: string): string => `sha256:${createHash('sha256').update(value, 'utf8').digest('hex')}`;
