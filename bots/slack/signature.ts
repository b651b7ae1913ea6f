// Slack's request signature (v0): HMAC-SHA256 with the app's signing secret
// over `v0:{X-Slack-Request-Timestamp}:{raw body}`, in X-Slack-Signature. It is
// checked on the raw bytes, before the body is parsed or anything is looked at,
// and a request more than five minutes from now either way is refused, so a
// captured request cannot be replayed later. The check is Bolt's, loaded with
// the first Slack request: a hub that never serves one never loads Bolt.

const MAX_SKEW_SECONDS = 5 * 60;

export interface SignedRequest {
  rawBody: string;
  signature: string | undefined;
  timestamp: string | undefined;
}

/** True when Slack signed this request with `signingSecret`, recently. */
export async function isSignedBySlack(signingSecret: string, request: SignedRequest, nowMs = Date.now()): Promise<boolean> {
  const timestamp = Number(request.timestamp);
  if (!request.signature || !Number.isInteger(timestamp)) return false;
  // Bolt refuses old timestamps only; one from the future is as suspect.
  if (Math.abs(nowMs / 1000 - timestamp) > MAX_SKEW_SECONDS) return false;
  const { isValidSlackRequest } = await import('@slack/bolt');
  return isValidSlackRequest({
    signingSecret,
    body: request.rawBody,
    headers: { 'x-slack-signature': request.signature, 'x-slack-request-timestamp': timestamp },
    nowMilliseconds: nowMs,
  });
}
