// Broker client libraries (the AWS SDK, kafkajs) load when the first consumer
// of their kind starts or the first result of their kind is sent, not when the
// process starts: a hub with no queue consumers never pays their memory. A
// load that fails is tried again at the next start or send.
import { lazyOnce } from '../../core/api/index.js';
import type { QueueSurfaceApi } from '../../core/surfaces/queue/queue-api.js';
import type { QueueRunner, ResultSender, RunnerFactory } from './runner.js';

export function lazyRunner(load: () => Promise<RunnerFactory>): RunnerFactory {
  return (config, deps): QueueRunner => {
    let runner: QueueRunner | null = null;
    let stopped = false;
    return {
      async start() {
        const factory = await load();
        if (stopped) return;
        runner = factory(config, deps);
        await runner.start();
      },
      async stop() {
        stopped = true;
        await runner?.stop();
      },
    };
  };
}

export function lazyResultSender(api: QueueSurfaceApi, load: () => Promise<(api: QueueSurfaceApi) => ResultSender>): ResultSender {
  const sender = lazyOnce(async () => (await load())(api));
  return {
    send: async (config, replyTo, result, deliveryId, signal) => (await sender()).send(config, replyTo, result, deliveryId, signal),
    async close() {
      await (await sender.ifLoaded())?.close();
    },
  };
}
