import { randomBytes } from 'node:crypto';
import {
  createEncryptionCodec,
  type MessageContext,
  type RedisAckQueueEvent,
  type RedisAckQueueService,
} from '../../lib';
import { queueKeys } from '../../lib/engine/keys/queue-keys';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * Turning a topic's codec on and off, and the rolling deploy between (docs/codecs.md): what was
 * stored before the switch is read as it was, what is pushed after is stored the new way, and a
 * process without the codec leaves sealed messages (no attempt counted, never dead) to one that has it.
 */
describe('codecs: switching a topic on and off', () => {
  const fx = useRedis();
  const codec = createEncryptionCodec({ keys: { k1: randomBytes(32) }, currentKeyId: 'k1' });

  type Item = { n: number; from: string };

  /** How a message's body is stored: sealed (`"e":"~..."`) or plain. */
  async function storedForm(topic: string, id: string): Promise<'sealed' | 'plain'> {
    const body = await fx.redis.hget(queueKeys('ackq', topic).messages, id);
    expect(body).not.toBeNull();
    return /"e":"~/.test(body!) ? 'sealed' : 'plain';
  }

  async function pushSome(queue: RedisAckQueueService, topic: string, from: string, count: number): Promise<string[]> {
    const results = await queue.pushMany(
      topic,
      Array.from({ length: count }, (_, n) => ({ payload: { n, from }, headers: { from } })),
    );
    return results.map((result) => result.id);
  }

  /** What each process's handler saw, by message id. */
  function recorder() {
    const runs = new Map<string, { by: string; payload: Item; from: string; attempt: number }[]>();
    const handler = (by: string) => (payload: Item, context: MessageContext) => {
      const seen = runs.get(context.id) ?? [];
      seen.push({ by, payload, from: context.headers.from, attempt: context.attempt });
      runs.set(context.id, seen);
    };
    return { runs, handler };
  }

  it('codec turned on: stored plain messages are consumed as they were, new ones are sealed', async () => {
    const topic = uniqueTopic('codec-on');
    const before = await fx.service({ history: false });
    const plainIds = await pushSome(before, topic, 'before', 10);
    const after = await fx.service({ codec, history: false });
    const sealedIds = await pushSome(after, topic, 'after', 10);
    for (const id of plainIds) expect(await storedForm(topic, id)).toBe('plain');
    for (const id of sealedIds) expect(await storedForm(topic, id)).toBe('sealed');

    const { runs, handler } = recorder();
    after.consume(topic, handler('after'));
    await eventually(() => runs.size === 20, 30_000);
    await after.waitUntilIdle(topic);
    for (const [ids, from] of [
      [plainIds, 'before'],
      [sealedIds, 'after'],
    ] as const)
      for (const [n, id] of ids.entries())
        expect(runs.get(id)).toEqual([{ by: 'after', payload: { n, from }, from, attempt: 1 }]);
    expect(await after.count(topic, 'dead')).toBe(0);
  });

  it('codec turned off with topicCodecs null: new messages are plain, the sealed ones still read', async () => {
    const topic = uniqueTopic('codec-off');
    const sealing = await fx.service({ codec, history: false });
    const sealedIds = await pushSome(sealing, topic, 'sealing', 10);
    const off = await fx.service({ codec, topicCodecs: { [topic]: null }, history: false });
    const plainIds = await pushSome(off, topic, 'off', 10);
    for (const id of sealedIds) expect(await storedForm(topic, id)).toBe('sealed');
    for (const id of plainIds) expect(await storedForm(topic, id)).toBe('plain');

    const { runs, handler } = recorder();
    off.consume(topic, handler('off'));
    await eventually(() => runs.size === 20, 30_000);
    await off.waitUntilIdle(topic);
    for (const [ids, from] of [
      [sealedIds, 'sealing'],
      [plainIds, 'off'],
    ] as const)
      for (const [n, id] of ids.entries())
        expect(runs.get(id)).toEqual([{ by: 'off', payload: { n, from }, from, attempt: 1 }]);
    expect(await off.count(topic, 'dead')).toBe(0);
  });

  it('a process without the codec defers sealed messages (no attempt, not dead) for one that has it', async () => {
    const topic = uniqueTopic('codec-missing');
    const sealing = await fx.service({ codec, history: false });
    const plain = await fx.service({ history: false });
    const sealedIds = await pushSome(sealing, topic, 'sealing', 10);
    const plainIds = await pushSome(plain, topic, 'plain', 10);

    const without = await fx.service({ history: false });
    const deferred = new Set<string>();
    const subscription = without.events$.subscribe((event: RedisAckQueueEvent) => {
      if (event.type === 'deferred' && event.topic === topic) deferred.add(event.id!);
    });
    const { runs, handler } = recorder();
    const consumer = without.consume(topic, handler('without'));
    await eventually(() => runs.size === 10 && deferred.size === 10, 60_000);
    await consumer.close();
    subscription.unsubscribe();
    expect([...runs.keys()].sort()).toEqual([...plainIds].sort());
    expect([...deferred].sort()).toEqual([...sealedIds].sort());
    expect(await without.count(topic, 'dead')).toBe(0);
    expect(await without.count(topic, 'delayed')).toBe(10);

    const withCodec = await fx.service({ codec, history: false });
    withCodec.consume(topic, handler('with'));
    await eventually(() => runs.size === 20, 60_000);
    await withCodec.waitUntilIdle(topic);
    // Each sealed message ran once, on the process with the codec, as its first attempt.
    for (const [n, id] of sealedIds.entries())
      expect(runs.get(id)).toEqual([{ by: 'with', payload: { n, from: 'sealing' }, from: 'sealing', attempt: 1 }]);
    expect(await withCodec.count(topic, 'dead')).toBe(0);
  }, 180_000);

  it('a rolling deploy: services with and without the codec produce and consume side by side, each message once', async () => {
    const topic = uniqueTopic('codec-rolling');
    const withCodec = await fx.service({ codec, history: false });
    const without = await fx.service({ history: false });
    const { runs, handler } = recorder();
    const deferredBy = new Set<string>();
    const subscription = without.events$.subscribe((event: RedisAckQueueEvent) => {
      if (event.type === 'deferred' && event.topic === topic) deferredBy.add(event.id!);
    });
    // The process without the codec starts first and meets sealed messages (so it surely defers some).
    const withoutConsumer = without.consume(topic, handler('without'), { concurrency: 4 });
    const early = await pushSome(withCodec, topic, 'with', 5);
    await eventually(() => deferredBy.size > 0, 30_000);
    withCodec.consume(topic, handler('with'), { concurrency: 4 });
    const pushed = { with: [...early], without: [] as string[] };
    await Promise.all(
      (['with', 'without'] as const).map(async (side) => {
        const producer = side === 'with' ? withCodec : without;
        for (let round = 0; round < 10; round++) pushed[side].push(...(await pushSome(producer, topic, side, 10)));
      }),
    );
    // The deploy ends: the last process without the codec stops (a sealed message it took meanwhile
    // went back to wait, so each one may pass it again, 5 s later each time, only until then).
    await withoutConsumer.close();
    const all = [...pushed.with, ...pushed.without];
    await eventually(() => all.every((id) => runs.has(id)), 60_000);
    await withCodec.waitUntilIdle(topic, { timeoutMs: 60_000 });
    subscription.unsubscribe();

    expect(runs.size).toBe(all.length);
    for (const [id, seen] of runs) expect({ id, runs: seen.length }).toEqual({ id, runs: 1 });
    // Sealed messages ran on the process with the codec only; plain ones on either.
    for (const id of pushed.with) expect(runs.get(id)![0]).toMatchObject({ by: 'with', from: 'with', attempt: 1 });
    for (const id of pushed.without) expect(runs.get(id)![0]).toMatchObject({ from: 'without', attempt: 1 });
    for (const id of pushed.with) expect(await storedFormOrGone(topic, id)).toBe('gone');
    expect(await withCodec.count(topic, 'dead')).toBe(0);
    expect([...deferredBy].every((id) => pushed.with.includes(id))).toBe(true);
  }, 180_000);

  /** 'gone' once a message is acked (its body is deleted). */
  async function storedFormOrGone(topic: string, id: string): Promise<'gone' | 'kept'> {
    return (await fx.redis.hexists(queueKeys('ackq', topic).messages, id)) ? 'kept' : 'gone';
  }
});
