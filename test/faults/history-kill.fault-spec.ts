import { ConsumerProcesses } from '../support/consumer-processes';
import { hold } from '../support/fault-ledger';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * history() against counted truth, under several producer and consumer processes, one consumer
 * SIGKILLed while it handles a batch. Each process sends what it counted once a second (and at
 * close): the killed one loses at most what it counted since its last send. Nothing else is
 * affected: every push is counted, and every ack but those.
 */
describe('fault: history recorded by several processes, one consumer killed', () => {
  const fx = useRedis();

  it('counts every push and every ack but the last second of the killed consumer', async () => {
    const topic = uniqueTopic('history-kill');
    const env = { ...fx.consumerEnv, TOPIC: topic };
    const consumers = new ConsumerProcesses({ ...env, LEASE_MS: '1000', HANDLER_MS: '4', CONCURRENCY: '8' });
    const producers = new ConsumerProcesses(
      { ...env, COUNT: '1500', BATCH: '15', EVERY_MS: '60' },
      'producer-process.js',
    );
    try {
      const [victim] = await Promise.all([consumers.start(), consumers.start(), consumers.start()]);
      const started = Date.now();
      await Promise.all([producers.start(), producers.start()]);
      // Kill the victim while it handles messages, after it has run long enough to have sent
      // counts more than once (every second).
      await hold(3_500);
      await consumers.waitFor((e) => e.type === 'start' && e.pid === victim.pid && (e.now ?? 0) > started + 3_000);
      await consumers.kill(victim, 'SIGKILL');
      const killedAt = Date.now();
      await consumers.start();
      await producers.waitFor((e) => e.type === 'closed', 60_000, 'the first producer closing');
      await Promise.all(producers.alive().map((child) => new Promise((resolve) => child.once('exit', resolve))));
      const queue = await fx.service();
      // Only a net against a hang: the killed consumer's leases run out after 1 s.
      await queue.waitUntilIdle(topic, { timeoutMs: 90_000 });
      // The survivors send what they counted as they close.
      await Promise.all(consumers.alive().map((child) => consumers.kill(child, 'SIGTERM')));

      const pushedTruth = producers.of('pushed').reduce((sum, e) => sum + (e.n ?? 0), 0);
      expect(pushedTruth).toBe(3000);
      const ackedBy = (pid?: number) => consumers.of('acked', pid).length;
      const victimAcked = ackedBy(victim.pid);
      // Acks the victim made in the 3 s before its death: the most it can have left unsent (one
      // send a second, with room for a loaded machine's late timers).
      const victimRecent = consumers
        .of('acked', victim.pid)
        .filter((e) => (e.receivedAt ?? 0) > killedAt - 3_000).length;
      const allAcked = ackedBy();
      expect(victimAcked).toBeGreaterThan(0);

      const history = await queue.history(topic, { from: started - 120_000 });
      const sum = (name: 'pushed' | 'acked' | 'retried' | 'dead' | 'cancelled') =>
        history.points.reduce((total, point) => total + point[name], 0);
      const handled = history.points.reduce((total, point) => total + point.handling.count, 0);
      expect(sum('pushed')).toBe(3000);
      // Each message was acked once in Redis; the history has every ack but the victim's unsent ones.
      expect(sum('acked')).toBeLessThanOrEqual(3000);
      expect(sum('acked')).toBeGreaterThanOrEqual(allAcked - victimRecent);
      expect(sum('acked')).toBeGreaterThanOrEqual(allAcked - victimAcked);
      expect(handled).toBe(sum('acked'));
      // The kill changed nothing else: no failure was counted.
      expect(sum('retried') + sum('dead') + sum('cancelled')).toBe(0);
      process.stdout.write(
        `history after a SIGKILL: ${sum('acked')} of ${allAcked} acks recorded; the victim acked ${victimAcked}, ` +
          `${victimRecent} in its last 3 s\n`,
      );
    } finally {
      await Promise.all([consumers.stopAll(), producers.stopAll()]);
    }
  }, 180_000);
});
