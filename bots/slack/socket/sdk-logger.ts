// What the Socket Mode SDK says goes to our log at debug level only, scrubbed:
// at its own debug level it prints whole envelopes (users' messages) and the
// WebSocket URL with its ticket, and its errors repeat what the connection
// reports itself, in one line, at the right level (connection.ts).
import { LogLevel, type Logger as SlackLogger } from '@slack/socket-mode';
import type { Logger } from '../../../core/logger.js';

/** A line without Slack tokens or connection tickets. */
export function scrubbed(text: string): string {
  return text.replace(/\bx(?:app|ox[a-z])-[A-Za-z0-9-]+/g, '[redacted]').replace(/ticket=[^&\s"']+/g, 'ticket=[redacted]');
}

export function sdkLogger(logger: Logger): SlackLogger {
  const say =
    (level: 'warn' | 'error') =>
    (...parts: unknown[]) =>
      logger.debug({ sdk: level }, scrubbed(parts.map(String).join(' ')));
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: say('warn'),
    error: say('error'),
    setLevel: () => undefined,
    getLevel: () => LogLevel.WARN,
    setName: () => undefined,
  };
}
