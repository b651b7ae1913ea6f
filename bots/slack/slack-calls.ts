// Calling Slack's Web API from a streamer: a 429 is waited out for the
// Retry-After Slack named; errors are sorted into what no retry changes (the bot
// cannot post there), what a method does not support here (a fallback exists),
// and what a later attempt may fix. What is kept of an error is one short line,
// never a token (the client's errors name the method, not the token).
import { setTimeout as sleep } from 'node:timers/promises';
import * as webApi from '@slack/web-api';
import { SlackCallError } from './slack-call-error.js';

/** Slack's answers that no retry can change. */
const PERMANENT = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'missing_scope',
  'no_permission',
  'restricted_action',
  'msg_too_long',
]);

function classify(method: string, error: unknown): SlackCallError {
  const code = (error as { code?: string }).code;
  if (code === webApi.ErrorCode.PlatformError) {
    const slackError = String((error as webApi.WebAPIPlatformError).data?.error ?? 'unknown_error');
    const line = `Slack refused ${method}: ${slackError}`;
    return new SlackCallError(PERMANENT.has(slackError) ? 'permanent' : 'refused', line, slackError);
  }
  if (code === webApi.ErrorCode.HTTPError) return new SlackCallError('transient', `${method} failed: HTTP ${(error as webApi.WebAPIHTTPError).statusCode}`);
  const message = error instanceof Error ? error.message.split('\n', 1)[0].slice(0, 200) : String(error);
  return new SlackCallError('transient', `${method} failed: ${message}`);
}

/** Runs `call`, waiting out rate limits (never past `signal`); anything else rejects as a SlackCallError. */
export async function callSlack<T>(method: string, call: () => Promise<T>, signal: AbortSignal): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if ((error as { code?: string }).code === webApi.ErrorCode.RateLimitedError) {
        const seconds = (error as webApi.WebAPIRateLimitedError).retryAfter;
        await sleep(Math.max(1, seconds) * 1000, undefined, { signal });
        continue;
      }
      throw classify(method, error);
    }
  }
}
