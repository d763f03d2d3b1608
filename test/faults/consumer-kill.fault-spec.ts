import type { ChildProcess } from 'node:child_process';
import { ConsumerProcesses } from '../support/consumer-processes';
import { FaultLedger, faultSeed, finishScenario, hold, produce, seededRandom } from '../support/fault-ledger';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

describe('fault: consumer processes killed with SIGKILL', () => {
  const fx = useRedis();

  it('delivers every message once more after each kill, and only the killed ones twice', async () => {
    const seed = faultSeed();
    const random = seededRandom(seed);
    const topic = uniqueTopic('kill');
    const ledger = new FaultLedger();
    const leaseMs = 1000;
    const processes = ConsumerProcesses.forTopic(fx.server.url, topic, { leaseMs, handlerMs: 20 });
    try {
      const queue = await fx.service();
      await Promise.all([processes.start(), processes.start(), processes.start()]);
      const total = 3000;
      const producing = produce(queue, topic, ledger, { total, batch: 30, everyMs: 90, idPrefix: 'k' });

      // Kill a random consumer at random moments while the burst runs; start a fresh one each time.
      const kills = 6;
      let interrupted = 0;
      for (let k = 0; k < kills; k++) {
        await hold(400 + Math.floor(random() * 800));
        const alive = processes.alive();
        const victim: ChildProcess = alive[Math.floor(random() * alive.length)];
        await processes.kill(victim, 'SIGKILL');
        const owner = `pid:${victim.pid}`;
        ledger.kill(owner);
        const started = new Set(processes.of('start', victim.pid).map((e) => e.id));
        const acked = new Set(processes.of('acked', victim.pid).map((e) => e.id));
        interrupted += [...started].filter((id) => !acked.has(id)).length;
        await processes.start();
      }
      await producing;
      // Only a net against a hang: nothing here is timed (7 processes start on a loaded machine too).
      await queue.waitUntilIdle(topic, { timeoutMs: 90_000 });
      // Idle in Redis; the last acks' reports may still be on their way through the pipes.
      await processes.waitForEndReports(ledger.pushed);

      ledger.fromProcesses(processes.events);
      const tally = await finishScenario(fx.redis, topic, ledger, 'consumer-sigkill', {
        shown: { seed },
        details: { interrupted },
      });
      expect(tally.pushed).toBe(total);
      expect(tally.handled).toBe(total);
      // The kills did hit running handlers: the scenario exercised redelivery.
      expect(interrupted).toBeGreaterThan(0);
    } finally {
      await processes.stopAll();
    }
  }, 180_000);
});
