import type { CancelListener, CancelSignals } from '../../lib/engine/redis/cancel-signals';
import { MessageCancelledError, type MessageContext, type RedisAckQueueEvent } from '../../lib';
import { QueueLogger } from '../../lib/observability/queue-logger';
import { QueueEvents } from '../../lib/queue/queue-events';
import { resolveConsumerSettings } from '../../lib/queue/settings';
import { deferred, turns } from '../support/async-helpers';
import { FakeEngine } from '../support/fake-engine';
import { KeeperWithAcks } from '../support/keeper-with-acks';

/** CancelSignals without Redis: the test calls the listeners as a publish would. */
function fakeCancels() {
  const listeners = new Set<CancelListener>();
  const cancels = {
    listen: (_topic: string, listener: CancelListener) => (listeners.add(listener), () => listeners.delete(listener)),
  } as unknown as CancelSignals;
  return { cancels, publish: (token: string, id: string) => listeners.forEach((listener) => listener(token, id)) };
}

/** A lease keeper of topic 'jobs' over a fake engine, hearing cancels from `fakeCancels`; its events recorded. */
function keeperOf(handler: (payload: string, context: MessageContext) => unknown) {
  const engine = new FakeEngine();
  const events: RedisAckQueueEvent[] = [];
  const queueEvents = new QueueEvents();
  queueEvents.stream$.subscribe((event) => events.push(event));
  const { cancels, publish } = fakeCancels();
  const keeper = new KeeperWithAcks<string>(
    engine,
    'jobs',
    handler,
    resolveConsumerSettings({ leaseMs: 60_000 }, undefined),
    { events: queueEvents, logger: new QueueLogger('warn'), cancels },
  );
  keeper.start();
  return { engine, events, publish, keeper };
}

describe('job control in the lease keeper', () => {
  it('starts a prefetched message cancelled before it ran with its signal aborted, and counts no outcome', async () => {
    const seen = deferred<MessageContext>();
    const { engine, events, publish, keeper } = keeperOf((_payload, context) => seen.resolve(context));
    try {
      engine.push(['a'], { maxAttempts: 3 });
      const [message] = (await engine.reserve<string>('jobs', 0, { count: 1, leaseMs: 60_000, maxAttempts: 3 }, []))
        .messages;
      // The cancel is heard while the message waits in the prefetch buffer; another lease's is ignored.
      publish(message.token, message.id);
      publish('9.9', 'other');
      keeper.run(message);
      const context = await seen.promise;
      expect(context.signal.aborted).toBe(true);
      expect(context.signal.reason).toBeInstanceOf(MessageCancelledError);
      await turns(5);
      // Acked once its handler returned, which lets a message that superseded it start (in Redis the
      // cancel took its lease: the ack is refused); no outcome is counted either way.
      expect(engine.acked).toEqual(['a']);
      expect(events.filter((e) => e.type !== 'reserved')).toEqual([]);
    } finally {
      await keeper.close(Date.now());
    }
  });
  it("reports nothing when a cancelled handler's ack (a signal to a superseding message) fails", async () => {
    const running = deferred<MessageContext>();
    const { engine, events, publish, keeper } = keeperOf(
      (_payload, context) =>
        new Promise<void>((resolve) => {
          running.resolve(context);
          context.signal.addEventListener('abort', () => resolve());
        }),
    );
    try {
      engine.push(['a'], { maxAttempts: 3 });
      const [message] = (await engine.reserve<string>('jobs', 0, { count: 1, leaseMs: 60_000, maxAttempts: 3 }, []))
        .messages;
      keeper.run(message);
      await running.promise;
      engine.failNext('ack');
      publish(message.token, message.id);
      await turns(10);
      expect(engine.calls.some((call) => call.method === 'ack')).toBe(true);
      expect(events.filter((e) => e.type !== 'reserved')).toEqual([]);
    } finally {
      await keeper.close(Date.now());
    }
  });
});
