import { type MessageContext, RedisAckQueueService } from '../../../lib';
import { eventually, uniqueTopic, useRedis } from '../../support/queue-fixture';
import { ReplyDroppingProxy } from '../../support/reply-dropping-proxy';

/**
 * What the history runs of the `push-retry` kind found (seed 6): a push whose reply is lost to a cut
 * connection is resent by the client once it reconnects; when its first copy was handled and acked
 * meanwhile, the resend stores the id again, and the handler runs a second time with no consumer
 * fault. Dedup by id holds only while a message with the id exists; `keepCompleted` keeps the acked
 * one, so the resend is a duplicate. Mirrors connection-cut.fault-spec.ts's lost-reply case, for a push.
 */
describe('verification: a push resent after a lost reply, its first copy already acked', () => {
  const fx = useRedis();

  async function handlingsOfResentPush(keepCompleted: boolean): Promise<{ runs: number; duplicate: boolean }> {
    const topic = uniqueTopic('push-resend');
    const proxy = await ReplyDroppingProxy.start(fx.server.port);
    // The producer's call waits out the cut-off: its own answer comes from the resend.
    const producer = new RedisAckQueueService({ connection: proxy.url, commandTimeoutMs: 30_000 });
    const consumer = await fx.service({ keepCompleted });
    const runs: number[] = [];
    try {
      await producer.connect();
      consumer.consume(topic, (_payload: unknown, context: MessageContext) => void runs.push(context.attempt));
      // The push runs in Redis, its reply is lost, and the producer cannot reconnect until reopened.
      proxy.dropReplyTo('resent-push', { thenCutOff: true });
      const pushing = producer.push(topic, { n: 1 }, { id: 'resent-push' });
      await eventually(() => runs.length === 1 && proxy.dropped === 1);
      await consumer.waitUntilIdle(topic, { timeoutMs: 10_000 });
      proxy.reopen();
      const { duplicate } = await pushing;
      await consumer.waitUntilIdle(topic, { timeoutMs: 10_000 });
      return { runs: runs.length, duplicate };
    } finally {
      await producer.close(0);
      await proxy.close();
    }
  }

  it('without keepCompleted: the resend stores the message again and it is handled twice (at-least-once, measured)', async () => {
    expect(await handlingsOfResentPush(false)).toEqual({ runs: 2, duplicate: false });
  });

  it('with keepCompleted: the resend is a duplicate and the message is handled once', async () => {
    expect(await handlingsOfResentPush(true)).toEqual({ runs: 1, duplicate: true });
  });
});
