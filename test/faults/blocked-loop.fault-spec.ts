import { ConsumerProcesses } from '../support/consumer-processes';
import { FaultLedger, finishScenario, produce } from '../support/fault-ledger';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

describe('fault: a consumer whose event loop is blocked longer than its lease', () => {
  const fx = useRedis();

  it('redelivers to another consumer; the late ack is refused, reported as lease-lost, and leaves the new lease alone', async () => {
    const topic = uniqueTopic('blocked');
    const ledger = new FaultLedger();
    const leaseMs = 800;
    const blockMs = 3000;
    const processes = ConsumerProcesses.forTopic(fx.server.url, topic, { leaseMs, handlerMs: 10 });
    const tokens = `{ackq:${topic}}:tokens`;
    const leased = `{ackq:${topic}}:leased`;
    try {
      const queue = await fx.service();
      const rounds = 2;
      const blockedIds: string[] = [];
      for (let round = 0; round < rounds; round++) {
        // The stalling consumer alone takes a message that blocks its loop for 3 s (> 3 leases of 0.8 s).
        const stalling = await processes.start({ BLOCK_MS: String(blockMs) });
        const id = `block-${round}`;
        blockedIds.push(id);
        // handlerMs: the healthy consumer that gets it next holds its lease past the stalled one's late ack.
        await produce(queue, topic, ledger, {
          total: 1,
          batch: 1,
          everyMs: 0,
          idPrefix: id,
          payload: () => ({ block: true, handlerMs: 5000 }),
        });
        const messageId = `${id}-0`;
        await processes.waitFor((e) => e.type === 'start' && e.id === messageId && e.pid === stalling.pid);
        // While it is stalled: a healthy consumer, and a burst it shares with the stalled one once that wakes up.
        const healthy = await processes.start();
        const burst = produce(queue, topic, ledger, { total: 250, batch: 25, everyMs: 40, idPrefix: `plain${round}` });
        const second = await processes.waitFor(
          (e) => e.type === 'start' && e.id === messageId && e.pid === healthy.pid,
          10_000,
        );
        expect(second.attempt).toBe(2);
        const newToken = await fx.redis.hget(tokens, messageId);
        expect(newToken).not.toBeNull();

        // The stalled consumer wakes up, finishes its handler and acks late: refused, reported.
        await processes.waitFor((e) => e.type === 'lease-lost' && e.id === messageId && e.pid === stalling.pid, 10_000);
        expect(processes.of('acked', stalling.pid).some((e) => e.id === messageId)).toBe(false);
        // The healthy consumer's lease is untouched: same token, still leased, still running.
        expect(processes.of('done', healthy.pid).some((e) => e.id === messageId)).toBe(false);
        expect(await fx.redis.hget(tokens, messageId)).toBe(newToken);
        expect(await fx.redis.zscore(leased, messageId)).not.toBeNull();
        expect(await fx.redis.hexists(`{ackq:${topic}}:messages`, messageId)).toBe(1);

        // And the healthy one acks it for good.
        await processes.waitFor((e) => e.type === 'acked' && e.id === messageId && e.pid === healthy.pid, 10_000);
        await burst;
        await queue.waitUntilIdle(topic, { timeoutMs: 30_000 });
        await processes.stopAll();
      }

      ledger.fromProcesses(processes.events);
      const tally = await finishScenario(fx.redis, topic, ledger, 'blocked-event-loop');
      expect(tally.handled).toBe(rounds * 251);
      for (const id of blockedIds) expect(ledger.ackCount(`${id}-0`)).toBe(1);
    } finally {
      await processes.stopAll();
    }
  }, 60_000);
});
