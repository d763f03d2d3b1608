import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';
import { ConsumerProcesses } from '../support/consumer-processes';
import { skewedClockEnv } from '../support/fake-clock';
import { FaultLedger, faultSeed, finishScenario, produce, seededRandom } from '../support/fault-ledger';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { wellBefore } from '../support/waits';

describe('fault: consumers whose clocks are off by five minutes (a preloaded skewed Date)', () => {
  const fx = useRedis();

  it('lease, delay and redeliver by the Redis clock, exactly as a consumer with a true clock', async () => {
    const seed = faultSeed();
    const random = seededRandom(seed);
    const topic = uniqueTopic('skew');
    const ledger = new FaultLedger();
    const leaseMs = 1000;
    const processes = ConsumerProcesses.forTopic(fx.server.url, topic, { leaseMs, handlerMs: 10 });
    // Date.now(), new Date() and Date() 300 s off in the consumer processes, monotonic clocks
    // true (test/support/skew-clock.js): every wall-clock reading of the library is skewed.
    const behind = skewedClockEnv(-300_000);
    const ahead = skewedClockEnv(300_000);
    try {
      const queue = await fx.service();
      let slow = await processes.start(behind);
      let fast = await processes.start(ahead);
      // Proof that the clocks really are off: each process reports its own Date.now().
      for (const [child, expected] of [
        [slow, -300_000],
        [fast, 300_000],
      ] as const) {
        const ready = processes.of('ready', child.pid)[0];
        expect(Math.abs(ready.now! - ready.receivedAt! - expected)).toBeLessThan(wellBefore(300_000));
      }

      // Delays: never early, and not minutes late, for consumers 5 minutes behind and ahead.
      const delays = new Map<string, { pushedAt: number; delayMs: number }>();
      const pushedAt = Date.now();
      await produce(queue, topic, ledger, {
        total: 300,
        batch: 300,
        everyMs: 0,
        idPrefix: 'delayed',
        item: (i) => {
          const delayMs = Math.floor(random() * 2000);
          delays.set(`delayed-${i}`, { pushedAt, delayMs });
          return { delayMs };
        },
      });
      await queue.waitUntilIdle(topic, { timeoutMs: 20_000 });
      let early = 0;
      let worstLateMs = 0;
      for (const [id, { pushedAt: at, delayMs }] of delays) {
        const start = processes.events.find((e) => e.type === 'start' && e.id === id)!;
        // Server clock and this process' clock are the same host's clock: start >= push + delay.
        if (start.receivedAt! < at + delayMs - 2) early++;
        worstLateMs = Math.max(worstLateMs, start.receivedAt! - (at + delayMs));
      }
      expect(early).toBe(0);
      // Not the skew's minutes late, nor an idle wait (a wake-up at the due time missed).
      expect(worstLateMs).toBeLessThan(wellBefore(DEFAULTS.idleWaitMs));

      // Leases and redelivery: a skewed owner holds a lease past 3 lease lengths by heartbeat,
      // dies, and the other skewed consumer gets the messages about one lease later, not at once
      // (clock behind) and not after 5 minutes (clock ahead).
      const redeliveryMs: number[] = [];
      for (const round of [0, 1]) {
        const [owner, heir] = round === 0 ? [slow, fast] : [fast, slow];
        // The heir is stopped while the owner takes the work: it must go to the owner.
        processes.signal(heir, 'SIGSTOP');
        const ids = [0, 1, 2, 3].map((i) => `lease${round}-${i}`);
        await produce(queue, topic, ledger, {
          total: 4,
          batch: 4,
          everyMs: 0,
          idPrefix: `lease${round}`,
          payload: () => ({ handlerMs: 5_000 }),
        });
        for (const id of ids) await processes.waitFor((e) => e.type === 'start' && e.id === id && e.pid === owner.pid);
        processes.signal(heir, 'SIGCONT');
        // Past three leases the owner still holds them all (heartbeats by the server clock).
        const holding = await processes
          .waitFor((e) => e.pid === heir.pid && e.type === 'start' && ids.includes(e.id!), 3.5 * leaseMs)
          .then(
            () => false,
            () => true,
          );
        expect(holding).toBe(true);
        expect(await queue.stats(topic)).toMatchObject({ leased: 4, ready: 0 });
        const killedAt = Date.now();
        await processes.kill(owner, 'SIGKILL');
        ledger.kill(`pid:${owner.pid}`);
        for (const id of ids) {
          const again = await processes.waitFor((e) => e.type === 'start' && e.id === id && e.pid === heir.pid, 5_000);
          redeliveryMs.push(again.receivedAt! - killedAt);
        }
        // A fresh consumer with the same skew replaces the dead owner.
        const replacement = await processes.start(round === 0 ? behind : ahead);
        if (round === 0) slow = replacement;
        else fast = replacement;
        await queue.waitUntilIdle(topic, { timeoutMs: 20_000 });
      }
      // The last heartbeat fell about a third of a lease before the kill: redelivery comes some
      // two thirds of a lease later (not at once), and within a lease, well before the heir's
      // idle wait would end (the skew's five minutes, or a missed due time, would pass that).
      expect(Math.min(...redeliveryMs)).toBeGreaterThanOrEqual(leaseMs / 3);
      expect(Math.max(...redeliveryMs)).toBeLessThan(leaseMs + wellBefore(DEFAULTS.idleWaitMs));
      // Idle in Redis; the last acks' reports may still be on their way through the pipes.
      await processes.waitForEndReports(ledger.pushed);

      ledger.fromProcesses(processes.events);
      const tally = await finishScenario(fx.redis, topic, ledger, 'clock-skew', {
        shown: { seed },
        details: { worstLateMs, redeliveryMs },
      });
      expect(tally.handled).toBe(308);
      // Only the killed owners' messages ran twice.
      expect(tally.duplicates).toBe(8);
    } finally {
      await processes.stopAll();
    }
  }, 60_000);
});
