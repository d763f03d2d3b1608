import type { MessageContext, QueueConsumer, RedisAckQueueOptions, RedisAckQueueService } from '../../lib';
import { type FaultLedger, hold } from './fault-ledger';
import type { useRedis } from './queue-fixture';

/**
 * Two in-process consumers (c1, c2) of one topic, each on a service of its own, every
 * handler start recorded in the ledger. By default a handler holds for 10 ms and succeeds.
 */
export async function followedConsumers(
  fx: Pick<ReturnType<typeof useRedis>, 'service'>,
  topic: string,
  ledger: FaultLedger,
  o: {
    options?: RedisAckQueueOptions;
    handle?: (payload: unknown, context: MessageContext) => unknown;
    onStart?: (at: number) => void;
  } = {},
): Promise<{ consumers: QueueConsumer[]; services: RedisAckQueueService[] }> {
  const { handle = () => hold(10), onStart } = o;
  const consumers: QueueConsumer[] = [];
  const services: RedisAckQueueService[] = [];
  for (const name of ['c1', 'c2']) {
    const service = await fx.service(o.options);
    services.push(service);
    ledger.follow(service, name, topic);
    const handler = (payload: unknown, context: MessageContext) => {
      ledger.start(name, context.id, context.attempt);
      onStart?.(Date.now());
      return handle(payload, context);
    };
    consumers.push(service.consume(topic, handler, { concurrency: 8 }));
  }
  return { consumers, services };
}
