import type { QueueConsumer, RedisAckQueueService } from '../../lib';
import { ConsumerProcesses } from '../support/consumer-processes';
import { FaultLedger, faultSeed, finishScenario, hold, produce, seededRandom } from '../support/fault-ledger';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { wellBefore } from '../support/waits';

describe('fault: graceful shutdown during a burst', () => {
  const fx = useRedis();

  it('SIGTERM to consumer processes and close() of in-process consumers: nothing lost, nothing handled twice', async () => {
    const seed = faultSeed();
    const random = seededRandom(seed);
    const topic = uniqueTopic('drain');
    const ledger = new FaultLedger();
    // A long lease: a message left leased by a shutdown would stall the run for 30 s.
    const leaseMs = 30_000;
    const processes = ConsumerProcesses.forTopic(fx.server.url, topic, { leaseMs, handlerMs: 30 });
    const local: { consumer: QueueConsumer; service: RedisAckQueueService }[] = [];
    const startLocal = async (name: string) => {
      const service = await fx.service({ leaseMs });
      ledger.follow(service, name, topic);
      const consumer = service.consume(
        topic,
        async (_payload, context) => {
          ledger.start(name, context.id, context.attempt);
          await hold(30);
        },
        { concurrency: 4 },
      );
      local.push({ consumer, service });
    };
    const exits: (number | null)[] = [];
    try {
      const producer = await fx.service();
      await Promise.all([processes.start(), processes.start()]);
      await startLocal('local-0');
      const total = 2500;
      const producing = produce(producer, topic, ledger, { total, batch: 25, everyMs: 50, idPrefix: 'g' });
      for (let round = 0; round < 6; round++) {
        await hold(300 + Math.floor(random() * 600));
        if (round % 2 === 0) {
          // SIGTERM: the process drains (close), acks what finishes, and exits 0.
          const alive = processes.alive();
          const victim = alive[Math.floor(random() * alive.length)];
          const exited = new Promise<number | null>((resolve) => victim.once('exit', (code) => resolve(code)));
          await processes.kill(victim, 'SIGTERM');
          exits.push(await exited);
          await processes.start();
        } else {
          // close() of the in-process consumer in the middle of its handlers, then a fresh one.
          await local[local.length - 1].consumer.close();
          await startLocal(`local-${round}`);
        }
      }
      await producing;
      await producer.waitUntilIdle(topic, { timeoutMs: 20_000 });
      // Idle in Redis; the last acks' reports may still be on their way through the pipes.
      await processes.waitForEndReports(ledger.pushed);
    } finally {
      await Promise.all(local.map(({ consumer }) => consumer.close()));
      await processes.stopAll();
    }
    ledger.fromProcesses(processes.events);
    const tally = await finishScenario(fx.redis, topic, ledger, 'graceful-shutdown', {
      shown: { seed },
      details: { exits },
    });
    expect(exits).toEqual([0, 0, 0]);
    expect(processes.of('closed')).toHaveLength(3);
    expect(tally.handled).toBe(2500);
    expect(tally.duplicates).toBe(0);
  }, 60_000);

  it('a drain shorter than the handlers hands their leases back at once, not at lease expiry', async () => {
    const topic = uniqueTopic('drain-short');
    const ledger = new FaultLedger();
    const leaseMs = 30_000;
    const drainMs = 200;
    const producer = await fx.service();
    let allBusy: () => void = () => undefined;
    const busy = new Promise<void>((resolve) => (allBusy = resolve));
    const make = async (name: string, handlerMs: number) => {
      const service = await fx.service({ leaseMs, drainMs });
      ledger.follow(service, name, topic);
      const aborted: string[] = [];
      let started = 0;
      const consumer = service.consume(
        topic,
        async (_payload, context) => {
          ledger.start(name, context.id, context.attempt);
          if (++started === 20) allBusy();
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, handlerMs);
            // The handler learns of the shutdown through its signal, and stops.
            context.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              aborted.push(context.id);
              resolve();
            });
          });
        },
        { concurrency: 20 },
      );
      return { consumer, aborted };
    };
    const slowHandlerMs = 5_000;
    const slow = await make('slow', slowHandlerMs);
    let fast: Awaited<ReturnType<typeof make>> | undefined;
    try {
      await produce(producer, topic, ledger, { total: 200, batch: 200, everyMs: 0, idPrefix: 'ds' });
      // All 20 slots of the slow consumer are running 5 s handlers.
      await busy;
      const closedAt = Date.now();
      expectLogs(/Released \d+ unfinished message\(s\)/);
      await slow.consumer.close();
      const closeMs = Date.now() - closedAt;
      // The hand-back is reported: all 20, of this topic.
      expect(loggedLines(/^Released/).map((line) => line.message)).toEqual([
        expect.stringMatching(`^Released 20 unfinished message\\(s\\) of "${topic}"`),
      ]);
      fast = await make('fast', 5);
      await producer.waitUntilIdle(topic, { timeoutMs: wellBefore(leaseMs) });
      const idleMs = Date.now() - closedAt;
      for (const id of slow.aborted) ledger.releasedAtShutdown(id);
      const tally = await finishScenario(fx.redis, topic, ledger, 'shutdown-drain-timeout', {
        details: { closeMs, idleMs, released: slow.aborted.length },
      });
      expect(slow.aborted.length).toBe(20);
      // Its drain, not the handlers' end: nearer the one than the other.
      expect(closeMs).toBeLessThan(drainMs + wellBefore(slowHandlerMs - drainMs));
      // Well before the 30 s lease would have run out.
      expect(idleMs).toBeLessThan(wellBefore(leaseMs));
      expect(tally.handled).toBe(200);
      // Only the released ones ran twice, and the interrupted delivery did not count as an attempt.
      expect(tally.duplicates).toBe(20);
      for (const id of slow.aborted) expect(ledger.starts(id).map((s) => s.attempt)).toEqual([1, 1]);
    } finally {
      await slow.consumer.close();
      await fast?.consumer.close();
    }
  }, 60_000);
});
