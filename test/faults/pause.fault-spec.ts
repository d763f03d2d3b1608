import type { QueueConsumer } from '../../lib';
import { FaultLedger, finishScenario, hold, produce } from '../support/fault-ledger';
import { expectLogs } from '../support/capture-logs';
import { followedConsumers } from '../support/fault-consumers';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

describe('fault: Redis stops answering for seconds (CLIENT PAUSE, DEBUG SLEEP)', () => {
  const fx = useRedis({ config: ['enable-debug-command', 'local'] });
  // A stall may pause a consumer (reported as an event too, and allowed: see below).
  expectLogs(/^Consumer of ".*" paused/);

  it('CLIENT PAUSE 3000 ALL, CLIENT PAUSE 3000 WRITE and DEBUG SLEEP 2 during a burst: no loss, no crash, no duplicate', async () => {
    const topic = uniqueTopic('pause');
    const ledger = new FaultLedger();
    // Leases longer than any stall: a stall alone must not cause a redelivery.
    const leaseMs = 8000;
    const producer = await fx.service();
    const consumers: QueueConsumer[] = [];
    const errors: string[] = [];
    const stalls: Record<string, number> = {};
    try {
      const started = await followedConsumers(fx, topic, ledger, { options: { leaseMs } });
      consumers.push(...started.consumers);
      for (const service of started.services) {
        service.events$.subscribe((e) => e.type === 'error' && errors.push(e.error?.message ?? ''));
      }
      const total = 2400;
      const producing = produce(producer, topic, ledger, { total, batch: 30, everyMs: 60, idPrefix: 'p' });
      const admin = fx.server.client();
      const stall = async (name: string, ...command: string[]) => {
        await hold(700);
        const at = Date.now();
        await admin.call(command[0], ...command.slice(1));
        // A pause returns at once; wait until the server answers writes again (the pause has ended).
        await producer.push(topic, 'probe', { id: `probe-${name}` });
        ledger.pushedIds([`probe-${name}`]);
        stalls[name] = Date.now() - at;
      };
      await stall('pause-all', 'CLIENT', 'PAUSE', '3000', 'ALL');
      await stall('pause-write', 'CLIENT', 'PAUSE', '3000', 'WRITE');
      await stall('debug-sleep', 'DEBUG', 'SLEEP', '2');
      await producing;
      await producer.waitUntilIdle(topic, { timeoutMs: 45_000 });
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }
    // Errors a stall may cause are reported as events; none of them may lose or repeat a message.
    const tally = await finishScenario(fx.redis, topic, ledger, 'pause-and-sleep', { details: { stalls, errors } });
    // Each stall really stopped the server for about its length.
    expect(stalls['pause-all']).toBeGreaterThanOrEqual(2500);
    expect(stalls['pause-write']).toBeGreaterThanOrEqual(2500);
    expect(stalls['debug-sleep']).toBeGreaterThanOrEqual(1500);
    expect(tally.handled).toBe(2400 + 3);
    expect(tally.duplicates).toBe(0);
  }, 60_000);
});
