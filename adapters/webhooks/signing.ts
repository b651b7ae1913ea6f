// Standard Webhooks signing (https://www.standardwebhooks.com): the receiver
// verifies `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the endpoint's
// secret. During a rotation's overlap every live secret signs, space-separated,
// and a receiver holding either one accepts.
import { Webhook } from 'standardwebhooks';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three Standard Webhooks headers for one attempt; `at` is the attempt's time (receivers refuse stale ones). */
export function signedHeaders(secrets: readonly string[], id: string, at: Date, body: string): SignedHeaders {
  if (secrets.length === 0) throw new Error('a webhook endpoint without a signing secret');
  const signature = secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
}
