import type { ChildProcess } from 'node:child_process';
import { CATCH_UP_AFTER_MS } from '../../lib/queue/schedules/schedule-times';
import { ConsumerProcesses } from '../support/consumer-processes';
import { faultSeed, hold, seededRandom } from '../support/fault-ledger';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const EVERY_MS = 300;
const tickOf = (id: string) => Number(id.split(':')[2]);

describe('fault: app instances running a schedule, killed with SIGKILL', () => {
  const fx = useRedis();

  it('pushes every tick exactly once while one instance runs; after all were down, one catch-up tick', async () => {
    const seed = faultSeed();
    const random = seededRandom(seed);
    const prefix = uniqueTopic('p');
    const topic = uniqueTopic('sched');
    const instances = new ConsumerProcesses(
      { REDIS_URL: fx.server.url, PREFIX: prefix, TOPIC: topic, EVERY_MS: String(EVERY_MS) },
      'scheduler-process.js',
    );
    // Every tick's message is consumed and acked here, so a second push of a tick could not be
    // hidden by push deduplication (the id is gone once acked): each handled id counts.
    const queue = await fx.service({ prefix, scheduler: false });
    const handled: string[] = [];
    const consumer = queue.consume(topic, (_payload, context) => void handled.push(context.id), { concurrency: 4 });
    try {
      const victims = (await Promise.all([instances.start(), instances.start(), instances.start()])).slice(1);
      await eventually(() => handled.length >= 3);

      // Kill the two others at random moments, during ticks, and start them again; one always runs.
      let killed = 0;
      for (let round = 0; round < 6; round++) {
        await hold(200 + Math.floor(random() * 900));
        const victim: ChildProcess = victims[round % 2];
        await instances.kill(victim, 'SIGKILL');
        killed++;
        victims[round % 2] = await instances.start();
      }
      await hold(1_000);
      const lastBeforeOutage = handled.length;
      await eventually(() => handled.length > lastBeforeOutage);

      // Every instance down for several periods (more than the catch-up bound)...
      await Promise.all(instances.alive().map((child) => instances.kill(child, 'SIGKILL')));
      await hold(500);
      const ticksBefore = handled.map(tickOf).sort((a, b) => a - b);
      await hold(CATCH_UP_AFTER_MS + 1_500);
      expect(handled.length).toBe(ticksBefore.length);
      // ... then one comes back.
      const restartedAt = Date.now();
      await instances.start();
      await eventually(() => handled.length >= ticksBefore.length + 4, 15_000);
      const ticks = handled.map(tickOf).sort((a, b) => a - b);

      expect(new Set(handled).size).toBe(handled.length);
      // No gap while one instance ran: consecutive ticks up to the outage.
      ticksBefore.forEach((tick, i) => i > 0 && expect(tick - ticksBefore[i - 1]).toBe(EVERY_MS));
      // After the outage: exactly one catch-up tick (the most recent missed one), then every tick.
      const after = ticks.slice(ticksBefore.length);
      const missed = (after[0] - ticksBefore.at(-1)!) / EVERY_MS - 1;
      expect(missed).toBeGreaterThan(5);
      expect(after[0]).toBeGreaterThan(restartedAt - 2 * EVERY_MS - 1_000);
      after.forEach((tick, i) => i > 0 && expect(tick - after[i - 1]).toBe(EVERY_MS));
      console.log(
        `[fault schedules] seed=${seed} kills=${killed} ticks=${ticks.length} skipped-in-outage=${missed} ` +
          `pushed-by=${new Set(instances.of('pushed').map((e) => e.pid)).size} processes`,
      );
    } finally {
      await consumer.close();
      await instances.stopAll();
    }
  }, 90_000);
});
