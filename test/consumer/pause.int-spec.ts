import { commandCounts, eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { quietFor, untilConsumerBlocked, wellBefore } from '../support/waits';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';

describe('pause and resume', () => {
  const fx = useRedis();

  it('stops every consumer at once while running handlers finish and ack; resume restarts at once', async () => {
    const topic = uniqueTopic('pause');
    const [first, second] = [await fx.service(), await fx.service()];
    const starts: number[] = [];
    let running = 0;
    const handler = async () => {
      starts.push(Date.now());
      running++;
      await new Promise((resolve) => setTimeout(resolve, 40));
      running--;
    };
    await first.pushMany(
      topic,
      Array.from({ length: 200 }, (_, i) => ({ payload: i })),
    );
    const acked: string[] = [];
    first.events$.subscribe((e) => e.type === 'acked' && acked.push(e.id!));
    second.events$.subscribe((e) => e.type === 'acked' && acked.push(e.id!));
    const consumers = [
      first.consume(topic, handler, { concurrency: 3 }),
      second.consume(topic, handler, { concurrency: 3 }),
    ];
    try {
      await stopAndRestart();
    } finally {
      await Promise.all(consumers.map((consumer) => consumer.close()));
    }

    async function stopAndRestart() {
      await eventually(() => starts.length >= 10);

      await first.pause(topic);
      const pausedAt = Date.now();
      await eventually(async () => running === 0 && (await first.stats(topic)).leased === 0);
      const startedBefore = starts.length;
      await quietFor(300, 'a delivery while paused');
      expect(starts.length).toBe(startedBefore);
      // Nothing leased after the pause: what starts later was in a consumer's hands already
      // (2 consumers × concurrency 3), however slowly this machine runs it.
      expect(starts.filter((at) => at > pausedAt).length).toBeLessThanOrEqual(2 * 3);
      // Every handler that started finished and was acked.
      await eventually(() => acked.length === starts.length);
      const stats = await second.stats(topic);
      expect(stats).toMatchObject({ paused: true, leased: 0, ready: 200 - starts.length });

      await second.resume(topic);
      const resumedAt = Date.now();
      await eventually(() => starts.length > startedBefore, 2_000, 1);
      // Woken by the resume, not at the end of the idle wait.
      expect(starts[startedBefore] - resumedAt).toBeLessThan(wellBefore(DEFAULTS.idleWaitMs));
      expect((await first.stats(topic)).paused).toBe(false);
    }
  });

  it('costs paused consumers no more than the idle budget, pushes included, and holds across a consumer restart', async () => {
    const topic = uniqueTopic('pause');
    // History off and the other services closed: the count is the consumers' alone.
    await fx.closeServices();
    const [first, second] = [await fx.service({ history: false }), await fx.service({ history: false })];
    await first.pause(topic);
    const seen: unknown[] = [];
    const a = first.consume(topic, (payload) => void seen.push(payload));
    const b = second.consume(topic, (payload) => void seen.push(payload));
    await first.push(topic, 'early');
    await untilConsumerBlocked(fx.nodes(), topic);
    const before = await commandCounts(fx.redis);
    // Pushes and delayed messages go on while paused; they do not wake paused consumers.
    for (let i = 0; i < 20; i++) await first.push(topic, i, { delayMs: i % 2 === 0 ? 0 : 50 });
    await quietFor(6_000, 'paused consumers polling faster than the idle budget');
    const after = await commandCounts(fx.redis);
    const sent = ['evalsha', 'eval', 'blpop'].reduce((sum, name) => sum + (after[name] ?? 0) - (before[name] ?? 0), 0);
    // 20 pushes, plus about one command a second per consumer (two consumers, 6 s).
    expect(sent - 20).toBeLessThanOrEqual(12);
    expect(seen).toEqual([]);
    // Delayed messages became ready on time: they are just not leased.
    expect(await first.stats(topic)).toMatchObject({ ready: 21, delayed: 0, leased: 0, paused: true });

    // A consumer started while paused takes nothing either.
    await a.close();
    const c = first.consume(topic, (payload) => void seen.push(payload));
    await quietFor(300, 'a new consumer leasing while paused');
    expect(seen).toEqual([]);

    await second.resume(topic);
    await eventually(() => seen.length === 21);
    await Promise.all([b.close(), c.close()]);
  });

  it('pauses every partition of a partitioned topic, for reserve() too', async () => {
    const topic = uniqueTopic('pause');
    const queue = await fx.service({ topics: { [topic]: { partitions: 3 } } });
    await queue.pushMany(
      topic,
      Array.from({ length: 12 }, (_, i) => ({ payload: i })),
    );
    await queue.pause(topic);
    await queue.pause(topic);
    expect(await queue.reserve(topic, { count: 12 })).toEqual([]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 12, paused: true });
    expect((await queue.gauges(topic)).paused).toBe(true);
    const seen: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void seen.push(payload));
    await queue.resume(topic);
    await eventually(() => seen.length === 12);
    await consumer.close();
  });

  it('refuses a bad topic and a closed service', async () => {
    const queue = await fx.service();
    await expect(queue.pause('bad topic')).rejects.toThrow(/Invalid topic/);
    await queue.close();
    await expect(queue.resume(uniqueTopic())).rejects.toThrow(/closed/);
  });
});
