// The AWS SDK's SQS client for one consumer: its endpoint and region, static
// credentials when the consumer has them (else the standard credential chain),
// and HTTP agents whose every connection passes Palai's egress guard.
import { SQSClient } from '@aws-sdk/client-sqs';
import type { QueueSurfaceApi } from '../../../core/surfaces/queue/queue-api.js';
import type { QueueConsumerConfig } from '../../../core/surfaces/queue/queue-port.js';
import { guardedAgents } from '../egress-sockets.js';

type SqsConfig = Extract<QueueConsumerConfig, { kind: 'sqs' }>;

/** A queue URL's region when it is an AWS one (`https://sqs.<region>.amazonaws.com/…`). */
function regionOf(queueUrl: string): string | undefined {
  return /^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com\//.exec(queueUrl)?.[1];
}

export function sqsClient(api: QueueSurfaceApi, config: SqsConfig, requestTimeoutMs: number): SQSClient {
  const { sqs, credentials } = config;
  return new SQSClient({
    region: sqs.region ?? regionOf(sqs.queue_url) ?? process.env.AWS_REGION ?? 'us-east-1',
    ...(sqs.endpoint ? { endpoint: sqs.endpoint } : {}),
    ...(credentials
      ? {
          credentials: {
            accessKeyId: credentials.access_key_id,
            secretAccessKey: credentials.secret_access_key,
            ...(credentials.session_token ? { sessionToken: credentials.session_token } : {}),
          },
        }
      : {}),
    // A long poll holds its request up to wait_seconds; the timeout must outlast it.
    requestHandler: { ...guardedAgents(api.egressSockets), requestTimeout: requestTimeoutMs, connectionTimeout: 5000 },
    maxAttempts: 3,
  });
}
