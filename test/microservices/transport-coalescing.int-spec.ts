import { firstValueFrom, lastValueFrom, type Subscription } from 'rxjs';
import { InvalidPayloadError, type PushResult, QueueKeyTypeError } from '../../lib';
import { RedisAckQueueClient, RedisAckQueueRecord } from '../../lib/microservices';
import { commandCounts, eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * The client's pushes of one event-loop turn go out as one script call per topic. No server runs
 * here: the only scripts Redis sees are the client's pushes (and a cancel's, after the counts).
 */
describe('the transport client coalesces the pushes of one turn', () => {
  const fx = useRedis();
  let client: RedisAckQueueClient;

  beforeAll(async () => {
    client = new RedisAckQueueClient({ connection: fx.connection });
    fx.closers.push(() => client.close());
    await client.connect();
  });

  const emit = (topic: string, data: unknown) => lastValueFrom(client.emit<PushResult>(topic, data));
  const scriptCalls = async () => {
    const counts = await commandCounts(fx.redis);
    return (counts.evalsha ?? 0) + (counts.eval ?? 0);
  };
  /** The topic registered and the client's ids issued, so that what follows is pushes only. */
  const readyTopic = async (name: string) => {
    const topic = uniqueTopic(name);
    await emit(topic, 'first');
    return topic;
  };
  const payloads = async (topic: string) =>
    (await client.unwrap().list(topic, 'ready', { limit: 100 })).map((message) => message.payload);

  it('pushes concurrent emits with one script call; each completes with its own stored message, in order', async () => {
    const topic = await readyTopic('coalesced');
    const before = await scriptCalls();
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => emit(topic, { n })));
    expect((await scriptCalls()) - before).toBe(1);
    expect(new Set(results.map((result) => result.id)).size).toBe(20);
    expect(results.every((result) => !result.duplicate)).toBe(true);
    expect(await payloads(topic)).toEqual(['first', ...Array.from({ length: 20 }, (_, n) => ({ n }))]);
  });

  it('pushes concurrent sends with one script call', async () => {
    const topic = await readyTopic('coalesced-requests');
    const before = await scriptCalls();
    const waiting: Subscription[] = Array.from({ length: 10 }, (_, n) =>
      client.send(topic, { n }).subscribe({ error: () => undefined }),
    );
    await eventually(async () => (await fx.redis.llen(`{ackq:${topic}}:ready`)) === 11);
    expect((await scriptCalls()) - before).toBe(1);
    for (const subscription of waiting) subscription.unsubscribe();
  });

  it('fails every emit of a push that failed, with its typed error, and stores none of them', async () => {
    const topic = await readyTopic('coalesced-failing');
    await fx.redis.del(`{ackq:${topic}}:ready`);
    await fx.redis.set(`{ackq:${topic}}:ready`, 'foreign');
    const before = await scriptCalls();
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, n) => emit(topic, { n })));
    expect((await scriptCalls()) - before).toBe(1);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(QueueKeyTypeError);
    }
    expect(await fx.redis.hlen(`{ackq:${topic}}:messages`)).toBe(1);
  });

  it('fails only the emit refused on its own account; the others of its turn are stored, in order', async () => {
    const topic = await readyTopic('coalesced-refused');
    const outcomes = await Promise.allSettled(
      [{ n: 0 }, { n: 1, big: 10n }, { n: 2 }].map((data) => emit(topic, data)),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(InvalidPayloadError);
    expect(await payloads(topic)).toEqual(['first', { n: 0 }, { n: 2 }]);
  });

  it('answers a duplicate id within one turn as a duplicate, as two pushes in turn would', async () => {
    const topic = await readyTopic('coalesced-duplicates');
    const [first, second] = await Promise.all([
      emit(topic, new RedisAckQueueRecord('a', { id: 'order-1' })),
      emit(topic, new RedisAckQueueRecord('b', { id: 'order-1' })),
    ]);
    expect(first).toEqual({ id: 'order-1', duplicate: false });
    expect(second).toEqual({ id: 'order-1', duplicate: true });
  });

  it('pushes one call per topic when a turn emits to two', async () => {
    const [a, b] = [await readyTopic('coalesced-a'), await readyTopic('coalesced-b')];
    const before = await scriptCalls();
    await Promise.all([emit(a, 1), emit(b, 1), emit(a, 2), emit(b, 2)]);
    expect((await scriptCalls()) - before).toBe(2);
    expect(await payloads(a)).toEqual(['first', 1, 2]);
    await firstValueFrom(client.emit(b, 3));
    expect(await payloads(b)).toEqual(['first', 1, 2, 3]);
  });
});
