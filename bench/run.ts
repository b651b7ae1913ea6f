// `npm run bench`: prints figures; nothing here asserts on timing.
import { benchBrokerOverhead } from './broker-overhead.js';
import { benchRestPath } from './rest-path.js';

await benchRestPath();
await benchBrokerOverhead();
