// The A2A push consumer, loaded with the A2A SDK at its first delivery, not
// when the process starts: a hub no A2A client ever asked for push
// notifications never loads the SDK for it. The outbox needs only its name
// before then. A load that fails fails that attempt (the outbox retries it)
// and is tried again at the next.
import { lazyOnce } from '../../core/api/index.js';
import type { OutboxConsumer } from '../../core/outbox/outbox-port.js';
import { PUSH_CONSUMER } from './push-consumer-name.js';

export function lazyPushConsumer(load: () => Promise<OutboxConsumer>): OutboxConsumer {
  const consumer = lazyOnce(load);
  return {
    name: PUSH_CONSUMER,
    deliver: async (delivery, signal) => (await consumer()).deliver(delivery, signal),
  };
}
