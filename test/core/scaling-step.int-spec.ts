import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import {
  RedisAckQueueMetricsModule,
  RedisAckQueueModule,
  RedisAckQueueScalingModule,
  RedisAckQueueService,
  type ScalingReport,
} from '../../lib';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

/** The scrape interval the issue names: KEDA's and Prometheus' usual 15 s. */
const SCRAPE_MS = 15_000;
const HANDLER_MS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The value of one sample line of the text exposition, undefined when absent. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/**
 * Pushes at `rate` messages a second in small batches on a 20 ms timer, each batch what the
 * rate owes since the rate was set (so a late timer on a loaded machine catches up, not drifts).
 */
class SteadyPusher {
  private since = Date.now();
  private sent = 0;
  private rate = 0;
  private readonly timer: NodeJS.Timeout;
  private pushing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly queue: RedisAckQueueService,
    private readonly topic: string,
  ) {
    this.timer = setInterval(() => this.tick(), 20);
  }

  setRate(rate: number): void {
    this.rate = rate;
    this.since = Date.now();
    this.sent = 0;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.pushing;
  }

  private tick(): void {
    const owed = Math.floor(((Date.now() - this.since) * this.rate) / 1000) - this.sent;
    if (owed <= 0) return;
    this.sent += owed;
    const items = Array.from({ length: owed }, (_, n) => ({ payload: n }));
    this.pushing = this.pushing.then(() => this.queue.pushMany(this.topic, items));
  }
}

describe('the scaling signal under a step of the arrival rate', () => {
  const fx = useRedis();
  let app: INestApplication;
  let url: string;
  const registry = new Registry();
  const topic = uniqueTopic();

  beforeAll(async () => {
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({ connection: fx.connection }),
        RedisAckQueueMetricsModule.forRoot({ registry, topics: [topic] }),
        RedisAckQueueScalingModule.forRoot({ path: '/scaling' }),
      ],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    fx.closers.push(() => app.close());
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/scaling`;
  });

  it('serves 404 for a topic without a target and 400 for a name that is no topic, as JSON', async () => {
    const none = await fetch(`${url}/${uniqueTopic()}`);
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ statusCode: 404 });
    const bad = await fetch(`${url}/${encodeURIComponent('a b')}`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ statusCode: 400, message: 'Not a topic name' });
  });

  it('reaches the count needed within two 15 s reads of a step from 100 to 1,000/s, holds it, and comes down after', async () => {
    const producer = app.get(RedisAckQueueService);
    const consumer = await fx.service();
    // 20 ms handlers, 60 at a time: room for 3,000/s, so the backlog stays small and the
    // signal follows the arrival rate; each replica is one consumer (concurrency 1).
    const worker = consumer.consume(topic, () => sleep(HANDLER_MS), { concurrency: 60 });
    await producer.setScalingTarget(topic, { targetWaitMs: 2_000 });
    const pusher = new SteadyPusher(producer, topic);
    const reads: ScalingReport[] = [];
    const start = Date.now();
    // Reads on a fixed 15 s grid (a late one does not shift the next).
    const readAt = async (k: number) => {
      await sleep(start + k * SCRAPE_MS - Date.now());
      reads.push((await producer.scaling(topic))!);
      return reads[reads.length - 1];
    };
    try {
      pusher.setRate(100);
      await readAt(0);
      await readAt(1);
      const low = await readAt(2);
      // 100/s x 20 ms: 2 slots busy; the fewest above them whose wait is within 2 s.
      expect(low.desiredConsumers).toBeGreaterThanOrEqual(3);
      expect(low.desiredConsumers).toBeLessThan(8);
      pusher.setRate(1000);
      await readAt(3);
      const high = await readAt(4);
      // Within two reads of the step: at least 1,000 x 0.020 = 20 consumers.
      expect(high.desiredConsumers).toBeGreaterThanOrEqual(Math.ceil((1000 * HANDLER_MS) / 1000));
      const steady = [await readAt(5), await readAt(6), await readAt(7)];
      for (const read of steady) expect(read.desiredConsumers).toBe(high.desiredConsumers);
      // The gauge and the KEDA endpoint answer the same number, between two reads.
      const text = await registry.metrics();
      expect(sample(text, 'redis_ack_queue_desired_consumers', `topic="${topic}"`)).toBe(high.desiredConsumers);
      const keda = (await (await fetch(`${url}/${topic}`)).json()) as ScalingReport;
      expect(keda).toMatchObject({ topic, desiredConsumers: high.desiredConsumers, targetWaitMs: 2_000 });
      pusher.setRate(100);
      // The cooldown (30 s) holds it through the first read after the step ends...
      const held = await readAt(8);
      expect(held.computedConsumers).toBeLessThan(high.desiredConsumers * 0.9);
      expect(held.desiredConsumers).toBe(high.desiredConsumers);
      // ...and within the cooldown plus two reads it is back down where 100/s needs it.
      const after = [await readAt(9), await readAt(10), await readAt(11)];
      expect(after[2].desiredConsumers).toBeLessThan(8);
      expect(after[2].desiredConsumers).toBe(after[2].computedConsumers);
    } catch (error) {
      // What each read said (desired/computed, arrival, handling, backlog), to tell why.
      const said = reads.map(
        (r) => `${r.desiredConsumers}/${r.computedConsumers} ${r.arrivalPerSecond}/s ${r.handlingMs} ms ${r.backlog}`,
      );
      (error as Error).message += `\nreads: ${said.join('; ')}`;
      throw error;
    } finally {
      await pusher.stop();
      // The last pushes drained, so the shutdown hands nothing back.
      await worker.close();
    }
  }, 400_000);
});
