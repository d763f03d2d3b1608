// Mirrors BullMQ's tests/deduplication.test.ts as scenarios of this queue's public API. BullMQ
// deduplicates by a deduplication id with `ttl`, `extend`, `replace` and `keepLastIfActive`; this
// queue has its own rules instead: a duplicate `id` is refused while the message exists, and key
// modes (`throttle`, `debounce`, `supersede` with `running: 'keep' | 'cancel'`) collapse pushes of one
// key atomically on the server clock. It emits no "deduplicated" event: the push's answer says so.
import { InvalidOptionError, type MessageContext, type PushOptions } from '../../../lib';
import { expectLogs } from '../../support/capture-logs';
import { untilCancelListened } from '../../support/cancel-listeners';
import { gate } from '../../support/gate';
import { eventually, snapshotTopic, uniqueTopic, useRedis } from '../../support/queue-fixture';

describe('BullMQ deduplication, as duplicate ids and key modes', () => {
  const fx = useRedis();
  expectLogs(/went to the dead letters|failed/);

  it('deduplication: "emits deduplicated event" — a second push of a live id answers `duplicate: true` and changes nothing', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    expect(await queue.push(topic, { v: 1 }, { id: 'order-1' })).toEqual({ id: 'order-1', duplicate: false });
    const before = await snapshotTopic(fx.redis, topic);
    expect(await queue.push(topic, { v: 2 }, { id: 'order-1' })).toEqual({ id: 'order-1', duplicate: true });
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    expect(await queue.get(topic, 'order-1')).toMatchObject({ payload: { v: 1 } });
  });

  it('deduplication: "waits until job is finished before removing deduplication key" (no ttl) — an id stays taken while leased, and is free once acked', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    await queue.push(topic, 'first', { id: 'once' });
    const [leased] = await queue.reserve(topic);
    expect((await queue.push(topic, 'again', { id: 'once' })).duplicate).toBe(true);
    expect(await queue.ack(leased)).toBe(true);
    expect(await queue.push(topic, 'again', { id: 'once' })).toEqual({ id: 'once', duplicate: false });
  });

  it('deduplication: "uses a fixed time period and emits deduplicated event" (ttl) — `throttle`: one message per window of the server clock, whatever became of it', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    const throttle: PushOptions = { throttle: { key: 'report', windowMs: 300 } };
    const first = await queue.push(topic, 1, throttle);
    expect(first.duplicate).toBe(false);
    // Acked at once: the window stays.
    const [message] = await queue.reserve(topic);
    await queue.ack(message);
    expect(await queue.push(topic, 2, throttle)).toEqual({ id: first.id, duplicate: true });
    const next = await eventually(async () => {
      const pushed = await queue.push(topic, 3, throttle);
      return pushed.duplicate ? null : pushed;
    }).then((pushed) => pushed!);
    expect(next.id).not.toBe(first.id);
    const [second] = await queue.reserve(topic);
    expect(second.payload).toBe(3);
    expect(second.enqueuedAt - message.enqueuedAt).toBeGreaterThanOrEqual(300);
  });

  it('deduplication: "resets ttl" (extend) — `debounce`: each push moves the waiting message\'s due time and gives it its payload; it runs once', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    const debounce: PushOptions = { debounce: { key: 'doc', delayMs: 300 } };
    const first = await queue.push(topic, { v: 1 }, debounce);
    const moved = await queue.push(topic, { v: 2 }, debounce);
    expect(moved).toEqual({ id: first.id, debounced: true });
    const waiting = (await queue.get(topic, first.id))!;
    expect(waiting).toMatchObject({ state: 'delayed', payload: { v: 2 } });
    expect(waiting.dueAt).toBe(waiting.enqueuedAt! + 300);
    const runs: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void runs.push(payload));
    await eventually(() => runs.length === 1);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect(runs).toEqual([{ v: 2 }]);
  });

  it('deduplication: "removes deduplication key" (when removing deduplicated job) — cancelling a key\'s waiting message frees the key', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    const debounce: PushOptions = { debounce: { key: 'doc', delayMs: 60_000 } };
    const first = await queue.push(topic, 1, debounce);
    expect(await queue.cancel(topic, first.id)).toBe('delayed');
    const second = await queue.push(topic, 2, debounce);
    expect(second.duplicate).toBe(false);
    expect(second.id).not.toBe(first.id);
    await queue.cancel(topic, second.id);
    // Nothing of the key is left once its last message went.
    const left = Object.keys(await snapshotTopic(fx.redis, topic)).filter((key) => /:(keys|key-of)$/.test(key));
    expect(left).toEqual([]);
  });

  it('deduplication: "should store next job data and create new job when active job completes" (keepLastIfActive) — `supersede` with `running: \'keep\'`: one runs, one waits with the latest payload, never two at once', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    const supersede: PushOptions = { supersede: { key: 'doc', running: 'keep' } };
    const finishFirst = gate();
    const runs: unknown[] = [];
    let running = 0;
    let most = 0;
    const consumer = queue.consume(
      topic,
      async (payload) => {
        runs.push(payload);
        most = Math.max(most, ++running);
        if (payload === 'a') await finishFirst.promise;
        running--;
      },
      { concurrency: 3 },
    );
    const a = await queue.push(topic, 'a', supersede);
    await eventually(() => runs.length === 1);
    const b = await queue.push(topic, 'b', supersede);
    expect(b.id).not.toBe(a.id);
    expect(await queue.push(topic, 'c', supersede)).toEqual({ id: b.id, superseded: true });
    expect(await queue.get(topic, b.id)).toMatchObject({ state: 'delayed', payload: 'c' });
    finishFirst.open();
    await eventually(() => runs.length === 2);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect(runs).toEqual(['a', 'c']);
    expect(most).toBe(1);
  });

  it('deduplication: "should requeue next job when active job fails permanently" (keepLastIfActive) — the waiting message starts once the running one is dead', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    const supersede: PushOptions = { supersede: { key: 'doc', running: 'keep' } };
    const failFirst = gate();
    const runs: unknown[] = [];
    const consumer = queue.consume(
      topic,
      async (payload) => {
        runs.push(payload);
        if (payload === 'a') {
          await failFirst.promise;
          throw new Error('failed for good');
        }
      },
      { maxAttempts: 1, concurrency: 2 },
    );
    await queue.push(topic, 'a', supersede);
    await eventually(() => runs.length === 1);
    await queue.push(topic, 'b', supersede);
    failFirst.open();
    await eventually(() => runs.length === 2);
    await consumer.close();
    expect(runs).toEqual(['a', 'b']);
    expect(await queue.deadLetters(topic)).toEqual([expect.objectContaining({ payload: 'a', reason: 'failed' })]);
  });

  it('deduplication: "should prevent parallel execution even when ttl expires while job is active" — here `supersede` with `running: \'cancel\'` cancels the running one, and the new one starts only once its handler returned', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    const supersede: PushOptions = { supersede: { key: 'search', running: 'cancel' } };
    const events: string[] = [];
    const consumer = queue.consume(
      topic,
      async (payload, context: MessageContext) => {
        events.push(`start ${String(payload)}`);
        if (payload === 'a') {
          await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
          // Some clean-up after the abort: the next one must still wait for this return.
          await new Promise((resolve) => setTimeout(resolve, 100));
          events.push('a returned');
        }
      },
      { concurrency: 2, leaseMs: 60_000 },
    );
    const a = await queue.push(topic, 'a', supersede);
    await eventually(() => events.length === 1);
    await untilCancelListened(fx.nodes(), topic);
    const b = await queue.push(topic, 'b', supersede);
    expect(b.duplicate).toBe(false);
    expect(b.id).not.toBe(a.id);
    await eventually(() => events.includes('start b'));
    await consumer.close();
    expect(events).toEqual(['start a', 'a returned', 'start b']);
    // `a` was cancelled, not completed or failed: gone, no dead letter.
    expect(await queue.get(topic, a.id)).toBeNull();
    expect(await queue.stats(topic)).toMatchObject({ dead: 0 });
  });

  it('deduplication: "should preserve custom jobId when requeuing proto-job" — here a key mode with an `id` is refused before Redis is touched', async () => {
    const topic = uniqueTopic('dedup');
    const queue = await fx.service();
    const withId = { id: 'mine', supersede: { key: 'doc', running: 'keep' } } as unknown as PushOptions;
    await expect(queue.push(topic, 'x', withId)).rejects.toBeInstanceOf(InvalidOptionError);
    expect(await snapshotTopic(fx.redis, topic)).toEqual({});
  });
});
