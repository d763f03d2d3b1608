import { expectLogs } from '../support/capture-logs';
import { FaultLedger, faultSeed, finishScenario, hold, produce, seededRandom } from '../support/fault-ledger';
import { followedConsumers } from '../support/fault-consumers';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

describe('fault: redis-server killed with SIGKILL (appendonly yes, appendfsync always)', () => {
  const fx = useRedis({ appendonly: true });
  // What the outages cause, and the ledger explains: lost connections, leases that ran out
  // meanwhile, consumers pausing until Redis is back.
  expectLogs(/^Lost the connection to Redis/, /^Lost the lease of message/, /^Consumer of ".*" paused/);

  it('loses no resolved push and no ack; producers and consumers recover without a restart', async () => {
    const seed = faultSeed();
    const random = seededRandom(seed);
    const topic = uniqueTopic('redis-kill');
    const ledger = new FaultLedger();
    const producer = await fx.service();
    const { consumers } = await followedConsumers(fx, topic, ledger, {
      options: { leaseMs: 1000 },
      handle: () => hold(20),
    });
    const total = 2500;
    const producing = produce(producer, topic, ledger, { total, batch: 25, everyMs: 60, idPrefix: 'r' });

    // Three outages at random moments, 200-1700 ms long: the longer ones outlast the 1 s leases.
    const outages: number[] = [];
    for (let k = 0; k < 3; k++) {
      await hold(800 + Math.floor(random() * 1200));
      const downMs = 200 + Math.floor(random() * 1500);
      outages.push(downMs);
      await fx.server.restartAfter(downMs);
    }
    await producing;
    // After the last outage, consumers must resume by themselves: no restart, no new consumer.
    await producer.waitUntilIdle(topic, { timeoutMs: 45_000 });
    await Promise.all(consumers.map((c) => c.close()));

    const tally = await finishScenario(fx.redis, topic, ledger, 'redis-sigkill-aof', { shown: { seed, outages } });
    expect(tally.pushed).toBe(total);
    expect(tally.handled).toBe(total);
  }, 90_000);
});
