import { InvalidMessageIdError, InvalidOptionError, type RedisAckQueueService } from '../../lib';
import { snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * UTF-8 cannot carry an unpaired UTF-16 surrogate: the client sends U+FFFD instead, so two
 * distinct names would reach Redis as one. Every string that names something in Redis is refused.
 */
describe('names that would not reach Redis unchanged are refused', () => {
  const fx = useRedis();
  let queue: RedisAckQueueService;
  let topic: string;

  beforeAll(async () => {
    queue = await fx.service();
    topic = uniqueTopic('ids');
    await queue.push(topic, 'a', { id: 'order-a' });
    await queue.push(topic, 'dead', { id: 'dead-a', maxAttempts: 1 });
    const [dead] = (await queue.reserve(topic, { count: 2 })).filter((m) => m.id === 'dead-a');
    await queue.nack(dead);
  });

  const leased = (t: string, o: { id?: string; token?: string }) =>
    ({ topic: t, id: o.id ?? 'order-a', token: o.token ?? '1.1', attempt: 1, maxAttempts: 1 }) as never;

  it.each<[string, (q: RedisAckQueueService, t: string) => Promise<unknown>, abstract new (...a: never[]) => Error]>([
    ['a pushed id', (q, t) => q.push(t, 'b', { id: 'order-\uD800' }), InvalidMessageIdError],
    ['a low surrogate alone', (q, t) => q.push(t, 'b', { id: '\uDFFForder' }), InvalidMessageIdError],
    [
      'an id in a batch',
      (q, t) => q.pushMany(t, [{ payload: 1 }, { payload: 2, id: 'x\uDBFF' }]),
      InvalidMessageIdError,
    ],
    ['a group', (q, t) => q.push(t, 'b', { group: 'g\uD800' }), InvalidOptionError],
    ['an id to look up', (q, t) => q.get(t, 'order-\uDBFF'), InvalidMessageIdError],
    ['an id to cancel', (q, t) => q.cancel(t, 'order-\uDBFF'), InvalidMessageIdError],
    ['an id to requeue', (q, t) => q.requeueDead(t, ['dead-\uD800']), InvalidMessageIdError],
    ['an id to purge', (q, t) => q.purgeDead(t, ['dead-\uD800']), InvalidMessageIdError],
    ['an id to ack', (q, t) => q.ack(leased(t, { id: 'order-\uD800' })), InvalidMessageIdError],
    ['a token to ack', (q, t) => q.ack(leased(t, { token: '1.\uD800' })), InvalidOptionError],
    ['a token to extend', (q, t) => q.extendLease(leased(t, { token: '\uDC00' }), 1_000), InvalidOptionError],
  ])('%s', async (_name, call, type) => {
    const before = await snapshotTopic(fx.redis, topic);
    await expect(call(queue, topic)).rejects.toBeInstanceOf(type);
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
  });

  it('keeps a paired surrogate (an emoji) as it is', async () => {
    const t = uniqueTopic('emoji');
    await queue.push(t, 1, { id: 'order-\u{1F600}', group: 'g-\u{1F600}' });
    expect(await queue.get(t, 'order-\u{1F600}')).toMatchObject({ id: 'order-\u{1F600}', group: 'g-\u{1F600}' });
  });

  it('leaves payloads and headers alone: their JSON escapes a lone surrogate, so they come back unchanged', async () => {
    const t = uniqueTopic('payload');
    await queue.push(t, { text: 'a\uD800b', [`k\uDFFF`]: ['\uDBFF'] }, { headers: { [`h\uD800`]: 'v\uDC00' } });
    const [message] = await queue.reserve(t);
    expect(message.payload).toEqual({ text: 'a\uD800b', [`k\uDFFF`]: ['\uDBFF'] });
    expect(message.headers).toEqual({ [`h\uD800`]: 'v\uDC00' });
  });
});
