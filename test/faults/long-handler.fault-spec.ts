import type { QueueConsumer } from '../../lib';
import { FaultLedger, finishScenario, hold, produce } from '../support/fault-ledger';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('fault: handlers that run longer than three leases', () => {
  const fx = useRedis();

  it('handles each message once: heartbeats keep the lease, nobody else gets it', async () => {
    const topic = uniqueTopic('long');
    const ledger = new FaultLedger();
    const leaseMs = 1000;
    const handlerMs = 3500; // more than three leases
    const producer = await fx.service();
    const consumers: QueueConsumer[] = [];
    try {
      for (const name of ['c1', 'c2']) {
        const service = await fx.service({ leaseMs });
        ledger.follow(service, name, topic);
        consumers.push(
          service.consume(
            topic,
            async (payload: { long: boolean }, context) => {
              ledger.start(name, context.id, context.attempt);
              await hold(payload.long ? handlerMs : 5);
            },
            { concurrency: 100 },
          ),
        );
      }
      // 200 long handlers among 200 short ones.
      const total = 400;
      await produce(producer, topic, ledger, {
        total,
        batch: 400,
        everyMs: 0,
        idPrefix: 'l',
        payload: (i) => ({ long: i % 2 === 0 }),
      });

      // Proof that the leases really move: a long message's deadline, sampled a lease apart, has advanced.
      const leased = `{ackq:${topic}}:leased`;
      await eventually(() => ledger.starts('l-0').length > 0);
      const first = Number(await fx.redis.zscore(leased, 'l-0'));
      await hold(leaseMs);
      const later = Number(await fx.redis.zscore(leased, 'l-0'));
      expect(first).toBeGreaterThan(0);
      expect(later).toBeGreaterThan(first + leaseMs / 3);

      await producer.waitUntilIdle(topic, { timeoutMs: 45_000 });
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }
    const tally = await finishScenario(fx.redis, topic, ledger, 'long-handler');
    expect(tally.handled).toBe(400);
    // Not one duplicate, not one lost lease: a long handler is no fault.
    expect(tally.duplicates).toBe(0);
    expect(ledger.counters().leaseLost).toBe(0);
  }, 60_000);
});
