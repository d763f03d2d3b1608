import { uniqueTopic, useRedis } from '../support/queue-fixture';

describe('wake-ups of an idle consumer', () => {
  const fx = useRedis();
  afterEach(() => Promise.all(fx.services.map((service) => service.close(0))));

  /** A lost wake-up leaves a push for the consumer's idle bound (5 s): half of it shows none was lost. */
  const LOST_WAKE_BOUND_MS = 2_500;

  it('handles every push within a bound well under the idle wait, whenever it lands, while waits end on timers', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    // Due much later than any wait: every wait ends on a timer, its blocking pop still outstanding.
    await queue.push(topic, { kind: 'far' }, { delayMs: 600_000 });
    const handled = new Map<string, () => void>();
    const consumer = queue.consume<{ kind: string; n: number }>(topic, ({ kind, n }) => handled.get(`${kind}${n}`)?.());
    const handledOf = (key: string) => new Promise<void>((resolve) => handled.set(key, resolve));

    const latencies: number[] = [];
    for (let n = 0; n < 150; n++) {
      // A message due soon: the consumer's wait ends on its timer, the pop stays outstanding.
      const tick = handledOf(`tick${n}`);
      await queue.push(topic, { kind: 'tick', n }, { delayMs: 10 + Math.random() * 40 });
      await tick;
      // A push at a random moment around the consumer's next reserve and wait.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
      const now = handledOf(`now${n}`);
      const pushedAt = Date.now();
      await queue.push(topic, { kind: 'now', n });
      await now;
      latencies.push(Date.now() - pushedAt);
    }
    await consumer.close();
    expect(latencies.filter((ms) => ms >= LOST_WAKE_BOUND_MS)).toEqual([]);
  }, 120_000);
});
