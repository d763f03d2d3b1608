import { InvalidOptionError, type RedisAckQueueService } from '../../lib';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** Pushes `n` messages that die at their first failure, with `error` as their last error text. */
async function deadLetters(queue: RedisAckQueueService, topic: string, n: number, error: string): Promise<string[]> {
  const pushed = await queue.pushMany(
    topic,
    Array.from({ length: n }, (_, i) => ({ payload: { i, error }, maxAttempts: 1 })),
  );
  let left = n;
  while (left > 0) {
    const batch = await queue.reserve(topic, { count: Math.min(left, 500) });
    if (batch.length === 0) throw new Error('fewer messages reserved than pushed');
    await Promise.all(batch.map((message) => queue.nack(message, { error })));
    left -= batch.length;
  }
  return pushed.map((result) => result.id);
}

const sorted = (ids: string[]) => [...ids].sort();

describe('bulk actions by filter', () => {
  const fx = useRedis();

  it('requeues the dead letters a filter selects, each once, and no other; status ends done', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const selected = await deadLetters(queue, topic, 1_200, 'timeout talking to bank');
    const others = await deadLetters(queue, topic, 300, 'card declined');
    const started = await queue.bulk(topic, { action: 'requeue', filter: { errorContains: 'bank' } });
    expect(started.selected).toBe(1_200);
    const done = await eventually(async () => {
      const status = await queue.bulkStatus(started.id);
      return status?.state === 'done' ? status : undefined;
    }, 30_000);
    expect(done).toMatchObject({ topic, action: 'requeue', selected: 1_200, processed: 1_200, skipped: 0 });
    expect(done!.createdAt).toBeGreaterThan(0);
    const ready = await queue.list(topic, 'ready', { limit: 10_000 });
    expect(sorted(ready.map((m) => m.id))).toEqual(sorted(selected));
    expect(ready.every((m) => m.attempt === 0)).toBe(true);
    const dead = await queue.deadLetters(topic, { limit: 1_000 });
    expect(sorted(dead.map((m) => m.id))).toEqual(sorted(others));
  });

  it('purges dead letters, and completed records', async () => {
    const queue = await fx.service({ keepCompleted: true });
    const topic = uniqueTopic();
    await deadLetters(queue, topic, 20, 'boom');
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    for (const message of await queue.reserve(topic, { count: 3 })) await queue.ack(message, 'ok');
    const dead = await queue.bulk(topic, { action: 'purge' });
    const completed = await queue.bulk(topic, { action: 'purge', filter: { state: 'completed' } });
    expect([dead.selected, completed.selected]).toEqual([20, 3]);
    await eventually(async () => (await queue.bulkStatus(completed.id))?.state === 'done' || undefined);
    await eventually(async () => (await queue.bulkStatus(dead.id))?.state === 'done' || undefined);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, dead: 0 });
    expect(await queue.list(topic, 'completed')).toEqual([]);
    expect(await fx.redis.hlen(`{ackq:${topic}}:messages`)).toBe(0);
  });

  it('cancels the ready messages it selected, not those pushed after', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 50 }, (_, i) => ({ payload: i })),
    );
    const { id, selected } = await queue.bulk(topic, { action: 'cancel', filter: { state: 'ready' } });
    expect(selected).toBe(50);
    const later = await queue.push(topic, 'later');
    await eventually(async () => (await queue.bulkStatus(id))?.state === 'done' || undefined);
    expect((await queue.list(topic, 'ready')).map((m) => m.id)).toEqual([later.id]);
  });

  it('replays dead letters and completed messages: a copy each (payload, headers, priority, group, tags), originals kept', async () => {
    const queue = await fx.service({ keepCompleted: true });
    const topic = uniqueTopic();
    const dead = await queue.push(topic, { n: 1 }, { headers: { h: 'x' }, priority: 5, tags: ['t1'], maxAttempts: 1 });
    const [leased] = await queue.reserve(topic);
    await queue.nack(leased, { error: 'boom' });
    const grouped = await queue.push(topic, { n: 2 }, { group: 'g', tags: ['t2', 't3'] });
    const [done] = await queue.reserve(topic);
    await queue.ack(done, 'result');
    expect((await queue.get(topic, grouped.id))!.payload).toEqual({ n: 2 });

    const first = await queue.bulk(topic, { action: 'replay' });
    const second = await queue.bulk(topic, { action: 'replay', filter: { state: 'completed', tag: 't3' } });
    expect([first.selected, second.selected]).toEqual([1, 1]);
    for (const { id } of [first, second])
      await eventually(async () => (await queue.bulkStatus(id))?.state === 'done' || undefined);
    const ready = await queue.list(topic, 'ready');
    expect(ready).toHaveLength(1);
    const copyOfDead = (await queue.get(topic, ready[0].id))!;
    expect(copyOfDead).toMatchObject({ payload: { n: 1 }, headers: { h: 'x' }, priority: 5, tags: ['t1'] });
    expect(copyOfDead.id).not.toBe(dead.id);
    // The grouped copy waits in its group.
    const [copyOfCompleted] = await queue.list(topic, 'ready', { tag: 't2' });
    expect(copyOfCompleted).toMatchObject({ payload: { n: 2 }, group: 'g', tags: ['t2', 't3'] });
    const [run] = await queue.reserve(topic, { count: 10 }).then((all) => all.filter((m) => m.group === 'g'));
    expect(run.payload).toEqual({ n: 2 });
    // The originals stay as they were.
    expect((await queue.get(topic, dead.id))!.state).toBe('dead');
    expect((await queue.get(topic, grouped.id))!.state).toBe('completed');
    expect((await queue.bulkStatus(second.id))!).toMatchObject({ processed: 1, skipped: 0 });
  });

  it('passes over a selected message that left the state meanwhile (skipped), and leaves it be', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const ids = await deadLetters(queue, topic, 10, 'x');
    // Slow (a message a step, 2 a second): the requeue by hand of the 5 newest, last in line, comes first.
    const { id } = await queue.bulk(topic, { action: 'purge', maxPerSecond: 2 });
    await queue.requeueDead(topic, ids.slice(5));
    const done = await eventually(async () => {
      const status = await queue.bulkStatus(id);
      return status?.state === 'done' ? status : undefined;
    }, 30_000);
    expect(done).toMatchObject({ selected: 10, processed: 10, skipped: 5 });
    expect(sorted((await queue.list(topic, 'ready')).map((m) => m.id))).toEqual(sorted(ids.slice(5)));
    expect(await queue.stats(topic)).toMatchObject({ ready: 5, dead: 0 });
  });

  it('stops on abortBulk: nothing is acted on after it resolves', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await deadLetters(queue, topic, 400, 'x');
    const { id } = await queue.bulk(topic, { action: 'requeue', maxPerSecond: 100 });
    await eventually(async () => ((await queue.bulkStatus(id))!.processed > 0 ? true : undefined));
    expect(await queue.abortBulk(id)).toBe(true);
    const after = await queue.stats(topic);
    const status = (await queue.bulkStatus(id))!;
    expect(status.state).toBe('aborted');
    expect(status.processed).toBeLessThan(400);
    expect(after.ready + after.dead).toBe(400);
    expect(after.ready).toBe(status.processed);
    // A runner's next step finds nothing: a second long look changes nothing.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await queue.stats(topic)).toEqual(after);
    expect(await queue.abortBulk(id)).toBe(false);
  });

  it('runs on a partitioned topic, over every partition', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ topics: { [topic]: { partitions: 4 } } });
    const ids = await deadLetters(queue, topic, 400, 'x');
    const { id, selected } = await queue.bulk(topic, { action: 'requeue' });
    expect(selected).toBe(400);
    await eventually(async () => (await queue.bulkStatus(id))?.state === 'done' || undefined, 30_000);
    expect((await queue.bulkStatus(id))!.processed).toBe(400);
    const ready = await queue.list(topic, 'ready', { limit: 1_000 });
    expect(sorted(ready.map((m) => m.id))).toEqual(sorted(ids));
  });

  it('refuses bad input with typed errors and changes nothing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await deadLetters(queue, topic, 3, 'x');
    const before = await queue.stats(topic);
    const bad: unknown[] = [
      { action: 'delete' },
      { action: 'requeue', filter: { state: 'ready' } },
      { action: 'purge', filter: { state: 'leased' } },
      { action: 'replay', filter: { state: 'delayed' } },
      { action: 'requeue', maxPerSecond: 0 },
      { action: 'requeue', maxPerSecond: 1_000_001 },
      { action: 'requeue', maxPerSecond: 1.5 },
      { action: 'requeue', filter: 'dead' },
      { action: 'requeue', filter: { state: 'dead', tags: ['a'] } },
      { action: 'requeue', filter: { tag: '' } },
      { action: 'requeue', filter: { tag: 'x'.repeat(129) } },
      { action: 'requeue', filter: { tag: 'a\nb' } },
      { action: 'requeue', filter: { from: 'yesterday' } },
      { action: 'requeue', filter: { errorContains: '' } },
      null,
    ];
    for (const options of bad)
      await expect(queue.bulk(topic, options as never)).rejects.toBeInstanceOf(InvalidOptionError);
    const secret = 'tenant-secret-42';
    await expect(queue.bulk(topic, { action: 'requeue', filter: { tag: `${secret}\u0000` } })).rejects.not.toThrow(
      secret,
    );
    expect(await queue.stats(topic)).toEqual(before);
    expect(await fx.redis.keys(`{ackq:${topic}}:bulk*`)).toEqual([]);
    await expect(queue.bulkStatus(42 as never)).rejects.toBeInstanceOf(InvalidOptionError);
    expect(await queue.bulkStatus('no-such-bulk')).toBeNull();
    expect(await queue.abortBulk('no-such-bulk')).toBe(false);
  });
});
