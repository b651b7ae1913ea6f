// Structured JSON logs (pino). Anything that could carry a secret is redacted by
// path, so a careless log call cannot leak a key.
import pino, { type Logger } from 'pino';

export type { Logger };

export const REDACTED_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'api_key',
  '*.api_key',
  'secret',
  '*.secret',
  'password',
  '*.password',
  'databaseUrl',
  '*.databaseUrl',
  'bootstrapApiKey',
  '*.bootstrapApiKey',
  'secretKey',
  '*.secretKey',
  'apiKey',
  '*.apiKey',
  'credentials',
  '*.credentials',
];

export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return pino({ level, base: { service: 'palai' }, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}

/** Removes the password from a connection URL before it is shown anywhere. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '[unparseable url]';
  }
}
