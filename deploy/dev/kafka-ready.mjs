// One readiness probe of a Kafka broker for deploy/dev/kafka.sh: exits 0 when
// a metadata request answers with at least one live broker, 1 otherwise. The
// script retries; this makes a single short attempt so a broker that dies
// during start is noticed at once.
import { Kafka, logLevel } from 'kafkajs';

const broker = process.argv[2];
const kafka = new Kafka({
  clientId: 'palai-dev-ready',
  brokers: [broker],
  connectionTimeout: 1000,
  requestTimeout: 2000,
  retry: { retries: 0 },
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
try {
  await admin.connect();
  const cluster = await admin.describeCluster();
  if (cluster.brokers.length === 0) throw new Error('no live broker in the metadata yet');
  await admin.listTopics();
  process.exitCode = 0;
} catch (error) {
  if (process.env.PALAI_DEV_VERBOSE === '1') console.error(`kafka-ready: ${error.message}`);
  process.exitCode = 1;
} finally {
  await admin.disconnect().catch(() => undefined);
}
