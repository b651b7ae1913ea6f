// Broker client libraries (the AWS SDK, kafkajs) load when the first consumer
// of their kind starts or the first result of their kind is sent, not when the
// process starts: a hub with no queue consumers never pays their memory.
import type { KernelApi } from '../../core/api/index.js';
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

export function lazyResultSender(api: KernelApi, load: () => Promise<(api: KernelApi) => ResultSender>): ResultSender {
  let sender: Promise<ResultSender> | null = null;
  return {
    async send(config, replyTo, result, deliveryId, signal) {
      sender ??= load().then((make) => make(api));
      return (await sender).send(config, replyTo, result, deliveryId, signal);
    },
    async close() {
      if (sender) await (await sender).close();
    },
  };
}
