// `npm run bench`: prints figures; nothing here asserts on timing.
import { benchA2aPath } from './a2a-path.js';
import { benchBackground } from './background.js';
import { benchBrokerOverhead } from './broker-overhead.js';
import { benchCallGate } from './call-gate.js';
import { writeResults } from './figures.js';
import { benchFootprint } from './footprint.js';
import { benchKernelPath } from './kernel-path.js';
import { benchMcpClient } from './mcp-client.js';
import { benchMcpToolsCall } from './mcp-tools-call.js';
import { benchNodeConnections } from './node-connections.js';
import { benchNodeRoundTrip } from './node-round-trip.js';
import { benchObjectiveWakes } from './objective-wakes.js';
import { benchQueueKafka } from './queue-kafka.js';
import { benchQueueSqs } from './queue-sqs.js';
import { benchRestPath } from './rest-path.js';
import { benchRetention } from './retention.js';
import { benchSseFanout } from './sse-fanout.js';
import { benchWebhooks } from './webhooks.js';

await benchKernelPath();
await benchFootprint();
await benchBackground();
await benchSseFanout();
await benchRestPath();
await benchBrokerOverhead();
await benchWebhooks();
await benchMcpToolsCall();
await benchMcpClient();
await benchA2aPath();
await benchNodeRoundTrip();
await benchNodeConnections();
await benchQueueSqs();
await benchQueueKafka();
await benchObjectiveWakes();
await benchCallGate();
await benchRetention();

writeResults(new URL('results.json', import.meta.url).pathname);
