import { ConsumerProcesses } from '../support/consumer-processes';
import { FaultLedger, NOTHING_LEFT, leftovers, printSummary, produce, storedIds } from '../support/fault-ledger';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

describe('fault: a consumer process frozen with SIGSTOP past its lease, resumed with SIGCONT', () => {
  const fx = useRedis();

  it('its late ack is refused and reported; the new owner keeps its lease and acks; nothing is lost', async () => {
    const topic = uniqueTopic('sigstop');
    const ledger = new FaultLedger();
    const leaseMs = 800;
    const processes = ConsumerProcesses.forTopic(fx.server.url, topic, { leaseMs, handlerMs: 10 });
    const tokens = `{ackq:${topic}}:tokens`;
    try {
      const queue = await fx.service();
      const rounds = 2;
      for (let round = 0; round < rounds; round++) {
        const frozen = await processes.start();
        const messageId = `stop${round}-0`;
        // 1.5 s of work: the frozen one is still "working" when it wakes; the next owner outlives its late ack.
        await produce(queue, topic, ledger, {
          total: 1,
          batch: 1,
          everyMs: 0,
          idPrefix: `stop${round}`,
          payload: () => ({ handlerMs: 1500 }),
        });
        await processes.waitFor((e) => e.type === 'start' && e.id === messageId && e.pid === frozen.pid);
        processes.signal(frozen, 'SIGSTOP');
        // While it is frozen: another consumer and a burst.
        const healthy = await processes.start();
        const burst = produce(queue, topic, ledger, { total: 300, batch: 30, everyMs: 40, idPrefix: `plain${round}` });
        const redelivery = await processes.waitFor(
          (e) => e.type === 'start' && e.id === messageId && e.pid === healthy.pid,
          10_000,
        );
        expect(redelivery.attempt).toBe(2);
        const newToken = await fx.redis.hget(tokens, messageId);
        expect(newToken).not.toBeNull();

        processes.signal(frozen, 'SIGCONT');
        // Its heartbeat or its ack after the handler finishes is refused: lease-lost, no ack.
        await processes.waitFor((e) => e.type === 'lease-lost' && e.id === messageId && e.pid === frozen.pid, 10_000);
        await processes.waitFor((e) => e.type === 'done' && e.id === messageId && e.pid === frozen.pid, 10_000);
        expect(processes.of('acked', frozen.pid).some((e) => e.id === messageId)).toBe(false);
        // The new lease is intact until its owner acks: its token, or none once that ack ran (whose
        // lines may still be in the pipe; a late ack of the frozen one that ended the lease would
        // fail the owner's ack awaited next).
        const token = await fx.redis.hget(tokens, messageId);
        if (token !== null) expect(token).toBe(newToken);
        await processes.waitFor((e) => e.type === 'acked' && e.id === messageId && e.pid === healthy.pid, 10_000);
        await burst;
        await queue.waitUntilIdle(topic, { timeoutMs: 30_000 });
        // Every ack of the burst reported before the consumers are killed (see waitForAcks).
        await processes.waitForAcks(`plain${round}-`, 300);
        await processes.stopAll();
      }

      ledger.fromProcesses(processes.events);
      const tally = ledger.tally({ leftInRedis: await storedIds(fx.redis, topic) });
      printSummary('sigstop-sigcont', tally, ledger.counters());
      expect(tally.violations).toEqual([]);
      expect(tally.handled).toBe(rounds * 301);
      expect(tally.lost).toBe(0);
      for (let round = 0; round < rounds; round++) expect(ledger.ackCount(`stop${round}-0`)).toBe(1);
      expect(await leftovers(fx.redis, topic)).toEqual(NOTHING_LEFT);
    } finally {
      await processes.stopAll();
    }
  }, 60_000);
});
