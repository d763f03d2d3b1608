import { firstValueFrom } from 'rxjs';
import { filter, take } from 'rxjs/operators';
import {
  InvalidMessageIdError,
  InvalidOptionError,
  InvalidStoredValueError,
  InvalidTopicError,
  QueueClosedError,
  RedisAckQueueService,
} from '../../lib';
import type { QueueEngine } from '../../lib/engine/queue-engine';
import { snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('get, list and cancel', () => {
  const fx = useRedis();

  /** A topic with one message in each state: r1 r2 ready, d1 d2 delayed, l1 leased, x1 dead. */
  async function everyState(queue: RedisAckQueueService, topic = uniqueTopic()) {
    await queue.push(topic, { n: 'x' }, { id: 'x1', maxAttempts: 1, headers: { h: 'x' } });
    const [dying] = await queue.reserve(topic, { leaseMs: 60_000 });
    await queue.nack(dying, { error: new Error('boom') });
    await queue.push(topic, { n: 'l' }, { id: 'l1' });
    const [leased] = await queue.reserve(topic, { leaseMs: 60_000 });
    await queue.pushMany(topic, [
      { id: 'r1', payload: 1 },
      { id: 'r2', payload: 2 },
      { id: 'd2', payload: 'd2', delayMs: 200_000 },
      { id: 'd1', payload: 'd1', delayMs: 100_000 },
    ]);
    return { topic, leased };
  }

  it('gets a message in each state with what is stored about it', async () => {
    const queue = await fx.service({ maxAttempts: 4 });
    const { topic, leased } = await everyState(queue);
    const [seconds] = await fx.redis.time();
    const now = Number(seconds) * 1000;

    expect(await queue.get(topic, 'r1')).toEqual({
      id: 'r1',
      state: 'ready',
      payload: 1,
      headers: {},
      attempt: 0,
      maxAttempts: 4,
      enqueuedAt: expect.any(Number) as unknown,
    });
    const delayed = await queue.get(topic, 'd1');
    expect(delayed).toMatchObject({ state: 'delayed', payload: 'd1', attempt: 0 });
    expect(delayed!.dueAt! - now).toBeGreaterThan(90_000);
    const lease = await queue.get(topic, 'l1');
    expect(lease).toMatchObject({ state: 'leased', payload: { n: 'l' }, attempt: 1 });
    expect(lease!.leaseDeadline).toBe(leased.leaseDeadline);
    expect(await queue.get(topic, 'x1')).toMatchObject({
      state: 'dead',
      payload: { n: 'x' },
      headers: { h: 'x' },
      attempt: 1,
      maxAttempts: 1,
      error: expect.stringMatching(/boom/) as unknown,
      deadAt: expect.any(Number) as unknown,
    });
    expect(await queue.get(topic, 'nope')).toBeNull();
    expect(await queue.get(uniqueTopic(), 'r1')).toBeNull();
  });

  it('lists each state in serving order, paged', async () => {
    const queue = await fx.service();
    const { topic } = await everyState(queue);
    const ids = async (state: Parameters<RedisAckQueueService['list']>[1], options = {}) =>
      (await queue.list(topic, state, options)).map((m) => m.id);
    expect(await ids('ready')).toEqual(['r1', 'r2']);
    expect(await ids('ready', { offset: 1, limit: 1 })).toEqual(['r2']);
    expect(await ids('delayed')).toEqual(['d1', 'd2']);
    expect(await ids('leased')).toEqual(['l1']);
    expect(await ids('dead')).toEqual(['x1']);
    expect(await ids('completed')).toEqual([]);
    const [dead] = await queue.list(topic, 'dead');
    expect(dead).toMatchObject({ state: 'dead', payload: { n: 'x' }, error: expect.stringMatching(/boom/) as unknown });
    const [first] = await queue.list(topic, 'delayed');
    expect(first).toMatchObject({ state: 'delayed', payload: 'd1', dueAt: expect.any(Number) as unknown });
  });

  it('cancels a message in each state, leaving no key of it behind', async () => {
    const queue = await fx.service();
    const { topic, leased } = await everyState(queue);
    const cancelled: string[] = [];
    const subscription = queue.events$
      .pipe(filter((e) => e.type === 'cancelled'))
      .subscribe((e) => cancelled.push(`${e.topic}/${e.id}`));
    const before = await snapshotTopic(fx.redis, topic);
    for (const [id, state] of [
      ['r2', 'ready'],
      ['d1', 'delayed'],
      ['l1', 'leased'],
      ['x1', 'dead'],
    ]) {
      expect(await queue.cancel(topic, id)).toBe(state);
      expect(await queue.cancel(topic, id)).toBeNull();
      expect(await queue.get(topic, id)).toBeNull();
    }
    subscription.unsubscribe();
    expect(cancelled).toEqual(['r2', 'd1', 'l1', 'x1'].map((id) => `${topic}/${id}`));
    // The cancelled lease's late ack and nack change nothing.
    expect(await queue.ack(leased)).toBe(false);
    expect(await queue.nack(leased)).toBe('lost');
    const after = await snapshotTopic(fx.redis, topic);
    const mentions = (snapshot: Record<string, unknown>, id: string) =>
      Object.values(snapshot).some((value) => JSON.stringify(value).includes(`"${id}"`));
    for (const id of ['r2', 'd1', 'l1', 'x1']) {
      expect(mentions(before, id)).toBe(true);
      expect(mentions(after, id)).toBe(false);
    }
    expect(await queue.stats(topic)).toEqual({ ready: 1, delayed: 1, leased: 0, dead: 0, paused: false });
    // Never delivered again.
    expect((await queue.reserve(topic, { count: 10 })).map((m) => m.id)).toEqual(['r1']);
  });

  it('lets exactly one of a cancel and an ack racing for a lease win', async () => {
    const queue = await fx.service();
    const other = await fx.service();
    const topic = uniqueTopic();
    const rounds = 60;
    await queue.pushMany(
      topic,
      Array.from({ length: rounds }, (_, i) => ({ id: `m${i}`, payload: i })),
    );
    const outcomes = { cancelWon: 0, ackWon: 0 };
    for (let i = 0; i < rounds; i++) {
      const [message] = await queue.reserve(topic, { leaseMs: 60_000 });
      // Two connections: neither call is ordered behind the other on one socket.
      const [acked, cancelled] =
        i % 2 === 0
          ? await Promise.all([queue.ack(message), other.cancel(topic, message.id)])
          : (await Promise.all([other.cancel(topic, message.id), queue.ack(message)])).reverse();
      if (acked) {
        expect(cancelled).toBeNull();
        outcomes.ackWon++;
      } else {
        expect(cancelled).toBe('leased');
        outcomes.cancelWon++;
      }
    }
    expect(outcomes.ackWon + outcomes.cancelWon).toBe(rounds);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('routes ids to their partition and merges the partitions in serving order', async () => {
    const topic = uniqueTopic('parts');
    const queue = await fx.service({ topics: { [topic]: { partitions: 4 } } });
    const ids = Array.from({ length: 12 }, (_, i) => `p${i}`);
    for (const [i, id] of ids.entries()) await queue.push(topic, i, { id, delayMs: 100_000 + (11 - i) * 1_000 });
    for (const id of ids) expect(await queue.get(topic, id)).toMatchObject({ id, state: 'delayed' });
    const byDue = [...ids].reverse();
    expect((await queue.list(topic, 'delayed')).map((m) => m.id)).toEqual(byDue);
    expect((await queue.list(topic, 'delayed', { offset: 3, limit: 4 })).map((m) => m.id)).toEqual(byDue.slice(3, 7));
    for (const id of ids.slice(0, 6)) expect(await queue.cancel(topic, id)).toBe('delayed');
    expect((await queue.list(topic, 'delayed', { limit: 100 })).map((m) => m.id)).toEqual(byDue.slice(0, 6));
    expect(await queue.stats(topic)).toMatchObject({ delayed: 6 });
  });

  it('refuses bad input with a typed error and changes nothing', async () => {
    const queue = await fx.service();
    const { topic, leased } = await everyState(queue);
    const before = await snapshotTopic(fx.redis, topic);
    const kept = await fx.service({ keepCompleted: true });
    const cases: [() => Promise<unknown>, new (...args: never[]) => Error, RegExp][] = [
      [() => queue.get('a b', 'r1'), InvalidTopicError, /Invalid topic/],
      [() => queue.get(topic, ''), InvalidMessageIdError, /non-empty string/],
      [() => queue.get(topic, 5 as never), InvalidMessageIdError, /Invalid message id 5/],
      [() => queue.cancel(topic, null as never), InvalidMessageIdError, /Invalid message id null/],
      [() => queue.cancel('{x}', 'r1'), InvalidTopicError, /Invalid topic/],
      [() => queue.list(topic, 'gone' as never), InvalidOptionError, /Invalid state "gone"/],
      [() => queue.list(topic, 'ready', { limit: 0 }), InvalidOptionError, /Invalid limit 0/],
      [() => queue.list(topic, 'ready', { limit: 10_001 }), InvalidOptionError, /Invalid limit 10001/],
      [() => queue.list(topic, 'ready', { offset: -1 }), InvalidOptionError, /Invalid offset -1/],
      [() => kept.ack(leased, { f: () => 1 }), InvalidStoredValueError, /result.*not JSON-serializable/],
      [() => kept.ack(leased, 'x'.repeat(2_000_000)), InvalidStoredValueError, /over the limit of 1048576/],
    ];
    for (const [call, type, text] of cases) {
      const failure = call();
      await expect(failure).rejects.toBeInstanceOf(type);
      await expect(failure).rejects.toThrow(text);
    }
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
  });

  it('refuses bad keepCompleted options when the service is made', () => {
    for (const keepCompleted of [{ maxCount: 0 }, { maxAgeMs: -1 }, 'yes', []]) {
      expect(
        () => new RedisAckQueueService({ connection: fx.connection, keepCompleted: keepCompleted as never }),
      ).toThrow(InvalidOptionError);
    }
    expect(
      () =>
        new RedisAckQueueService({ connection: fx.connection, topics: { t: { keepCompleted: { maxCount: 1.5 } } } }),
    ).toThrow(/Invalid topics\.t\.keepCompleted\.maxCount 1\.5/);
  });

  it('deletes the progress of messages no longer leased when progress is written', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 1, { id: 'live' });
    const [live] = await queue.reserve(topic, { leaseMs: 60_000 });
    // Left by a delivery acked through reserve.lua, which does not know of progress.
    await fx.redis.hset(`{ackq:${topic}}:progress`, 'gone', '1');
    const engine = (queue as unknown as { core: { engine: QueueEngine } }).core.engine;
    expect(await engine.progress(topic, live, '{"step":2}')).toBe(true);
    expect(await fx.redis.hgetall(`{ackq:${topic}}:progress`)).toEqual({ live: '{"step":2}' });
    expect((await queue.get(topic, 'live'))?.progress).toEqual({ step: 2 });
  });

  it('fails with QueueClosedError once closed', async () => {
    const queue = await fx.service();
    await queue.close();
    await expect(queue.get('t', 'a')).rejects.toBeInstanceOf(QueueClosedError);
    await expect(queue.list('t', 'ready')).rejects.toBeInstanceOf(QueueClosedError);
    await expect(queue.cancel('t', 'a')).rejects.toBeInstanceOf(QueueClosedError);
  });

  it('emits cancelled only when something was cancelled', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.push(topic, 'secret payload', { id: 'c1' });
    const event = firstValueFrom(
      queue.events$.pipe(
        filter((e) => e.type === 'cancelled'),
        take(1),
      ),
    );
    expect(await queue.cancel(topic, 'none')).toBeNull();
    expect(await queue.cancel(topic, 'c1')).toBe('ready');
    expect(await event).toEqual({ type: 'cancelled', topic, id: 'c1' });
  });
});
