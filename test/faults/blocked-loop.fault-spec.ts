import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsumerProcesses } from '../support/consumer-processes';
import { FaultLedger, finishScenario, produce } from '../support/fault-ledger';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

describe('fault: a consumer whose event loop is blocked longer than its lease', () => {
  const fx = useRedis();

  it('redelivers to another consumer; the late ack is refused, reported as lease-lost, and leaves the new lease alone', async () => {
    const topic = uniqueTopic('blocked');
    const ledger = new FaultLedger();
    const leaseMs = 800;
    // The stall and the healthy consumer's hold end when the test creates a file, on the events
    // it waits for (not after fixed times that a loaded machine may outrun): the stalled
    // consumer wakes once the healthy one has the message (so > 1 lease later), and the healthy
    // one acks once the stalled one's late ack was refused.
    const signals = mkdtempSync(join(tmpdir(), 'ackq-blocked-'));
    const signal = (name: string) => writeFileSync(join(signals, name), '');
    const processes = ConsumerProcesses.forTopic(fx.server.url, topic, { leaseMs, handlerMs: 10 });
    const tokens = `{ackq:${topic}}:tokens`;
    const leased = `{ackq:${topic}}:leased`;
    try {
      const queue = await fx.service();
      const rounds = 2;
      const blockedIds: string[] = [];
      for (let round = 0; round < rounds; round++) {
        // The stalling consumer alone takes a message that blocks its loop until told to wake.
        const id = `block-${round}`;
        const stalling = await processes.start({ BLOCK_UNTIL_FILE: join(signals, `${id}-wake`) });
        blockedIds.push(id);
        // holdUntilFile: the healthy consumer that gets it next holds its lease past the stalled one's late ack.
        await produce(queue, topic, ledger, {
          total: 1,
          batch: 1,
          everyMs: 0,
          idPrefix: id,
          payload: () => ({ block: true, holdUntilFile: join(signals, `${id}-release`) }),
        });
        const messageId = `${id}-0`;
        await processes.waitFor((e) => e.type === 'start' && e.id === messageId && e.pid === stalling.pid);
        // While it is stalled: a healthy consumer, and a burst it shares with the stalled one once that wakes up.
        const healthy = await processes.start();
        const burst = produce(queue, topic, ledger, { total: 250, batch: 25, everyMs: 40, idPrefix: `plain${round}` });
        const second = await processes.waitFor(
          (e) => e.type === 'start' && e.id === messageId && e.pid === healthy.pid,
          30_000,
          'start of the stalled message on the healthy consumer',
        );
        expect(second.attempt).toBe(2);
        const newToken = await fx.redis.hget(tokens, messageId);
        expect(newToken).not.toBeNull();

        // The stalled consumer wakes up, finishes its handler and acks late: refused, reported.
        signal(`${id}-wake`);
        await processes.waitFor(
          (e) => e.type === 'lease-lost' && e.id === messageId && e.pid === stalling.pid,
          30_000,
          'lease-lost of the stalled consumer',
        );
        expect(processes.of('acked', stalling.pid).some((e) => e.id === messageId)).toBe(false);
        // The healthy consumer's lease is untouched: same token, still leased, still running.
        expect(processes.of('done', healthy.pid).some((e) => e.id === messageId)).toBe(false);
        expect(await fx.redis.hget(tokens, messageId)).toBe(newToken);
        expect(await fx.redis.zscore(leased, messageId)).not.toBeNull();
        expect(await fx.redis.hexists(`{ackq:${topic}}:messages`, messageId)).toBe(1);

        // And the healthy one acks it for good.
        signal(`${id}-release`);
        await processes.waitFor(
          (e) => e.type === 'acked' && e.id === messageId && e.pid === healthy.pid,
          30_000,
          'ack of the healthy consumer',
        );
        await burst;
        await queue.waitUntilIdle(topic, { timeoutMs: 30_000 });
        // Every ack of the burst reported before the consumers are killed (see waitForAcks).
        await processes.waitForAcks(`plain${round}-`, 250);
        await processes.stopAll();
      }

      ledger.fromProcesses(processes.events);
      const tally = await finishScenario(fx.redis, topic, ledger, 'blocked-event-loop');
      expect(tally.handled).toBe(rounds * 251);
      for (const id of blockedIds) expect(ledger.ackCount(`${id}-0`)).toBe(1);
    } finally {
      await processes.stopAll();
      rmSync(signals, { recursive: true, force: true });
    }
  }, 180_000);
});
