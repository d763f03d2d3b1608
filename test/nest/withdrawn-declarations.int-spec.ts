import { Injectable, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
  type QueueHandlerOptions,
  type RedisAckQueueModuleOptions,
} from '../../lib';
import { testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The payloads a handler ran, in order, and how many ran at once. */
class Runs {
  readonly payloads: number[] = [];
  running = 0;
  maxRunning = 0;

  async run(payload: number, holdMs: number): Promise<void> {
    this.payloads.push(payload);
    this.maxRunning = Math.max(this.maxRunning, ++this.running);
    await sleep(holdMs);
    this.running--;
  }
}

/** A handler class of `topic` with `options`, recording into `runs`. */
function handlerOf(topic: string, options: QueueHandlerOptions, runs: Runs, holdMs = 0): Type {
  @Injectable()
  class Handlers {
    @QueueHandler(topic, options)
    handle(payload: number): Promise<void> {
      return runs.run(payload, holdMs);
    }
  }
  return Handlers;
}

/**
 * What code declares, code withdraws: limits a @QueueHandler no longer declares and schedules the
 * module's `schedules` no longer lists stop applying at the next startup; those set by hand stay.
 */
describe('declarations removed from the code', () => {
  const fx = useRedis();

  async function startApp(providers: Type[], options: Partial<RedisAckQueueModuleOptions> = {}) {
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({ connection: fx.connection, prefix: 'withdrawn', drainMs: 0, ...options }),
      ],
      providers,
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: testLogger() });
    return { app, queue: app.get(RedisAckQueueService) };
  }

  it('a handler that no longer declares groupConcurrency runs a group one at a time, in push order', async () => {
    const topic = uniqueTopic('withdrawn.group');
    const before = await startApp([handlerOf(topic, { concurrency: 5, groupConcurrency: 5 }, new Runs())]);
    await eventually(async () => (await before.queue.limits(topic)).groupConcurrency === 5);
    await before.app.close();

    const runs = new Runs();
    const producer = await fx.service({ prefix: 'withdrawn' });
    await producer.pushMany(
      topic,
      [0, 1, 2, 3, 4].map((payload) => ({ payload, group: 'g' })),
    );
    const after = await startApp([handlerOf(topic, { concurrency: 5 }, runs, 30)]);
    try {
      await eventually(() => runs.payloads.length === 5 && runs.running === 0);
      expect(await after.queue.limits(topic)).toEqual({});
      expect(runs.payloads).toEqual([0, 1, 2, 3, 4]);
      expect(runs.maxRunning).toBe(1);
    } finally {
      await after.app.close();
    }
  });

  it('a handler that no longer declares rateLimit runs every message at once', async () => {
    const topic = uniqueTopic('withdrawn.rate');
    const before = await startApp([handlerOf(topic, { rateLimit: { max: 1, perMs: 3_600_000 } }, new Runs())]);
    await eventually(async () => (await before.queue.limits(topic)).rateLimit !== undefined);
    await before.app.close();

    const runs = new Runs();
    const producer = await fx.service({ prefix: 'withdrawn' });
    await producer.pushMany(
      topic,
      [0, 1, 2, 3, 4].map((payload) => ({ payload })),
    );
    const after = await startApp([handlerOf(topic, { concurrency: 5 }, runs)]);
    try {
      // With the hour's single start still in force, four would wait an hour.
      await eventually(() => runs.payloads.length === 5);
      expect(await after.queue.limits(topic)).toEqual({});
    } finally {
      await after.app.close();
    }
  });

  it("keeps limits set by hand, the module's topic limits, and those a handler of the topic in the app declares", async () => {
    const [byHand, inModule, shared] = ['hand', 'module', 'shared'].map((name) => uniqueTopic(`withdrawn.${name}`));
    const producer = await fx.service({ prefix: 'withdrawn' });
    await producer.setLimits(byHand, { globalConcurrency: 2 });
    const runs = new Runs();
    const { app, queue } = await startApp(
      [
        handlerOf(byHand, {}, runs),
        handlerOf(inModule, {}, new Runs()),
        handlerOf(shared, { globalConcurrency: 3 }, new Runs()),
      ],
      { topics: { [inModule]: { groupConcurrency: 4 } } },
    );
    try {
      await producer.push(byHand, 7);
      await eventually(() => runs.payloads.length === 1);
      await eventually(async () => (await queue.limits(shared)).globalConcurrency === 3);
      // A consumer started at run time without limits, beside the handler that declares them.
      const extra = queue.consume(shared, () => undefined);
      await producer.push(shared, 1);
      await eventually(async () => (await queue.stats(shared)).ready === 0);
      await extra.close();
      expect(await queue.limits(byHand)).toEqual({ globalConcurrency: 2 });
      expect(await queue.limits(inModule)).toEqual({ groupConcurrency: 4 });
      expect(await queue.limits(shared)).toEqual({ globalConcurrency: 3 });
    } finally {
      await app.close();
    }
  });
  it('withdraws on a partitioned topic too, and keeps limits set there by hand', async () => {
    const [declared, byHand] = ['declared', 'hand'].map((name) => uniqueTopic(`withdrawn.partitioned.${name}`));
    const topics = { [declared]: { partitions: 3 }, [byHand]: { partitions: 3 } };
    const before = await startApp([handlerOf(declared, { globalConcurrency: 3 }, new Runs())], { topics });
    await eventually(async () => (await before.queue.limits(declared)).globalConcurrency === 3);
    await before.queue.setLimits(byHand, { globalConcurrency: 6 });
    await before.app.close();

    const runs = new Runs();
    const after = await startApp([handlerOf(declared, {}, runs), handlerOf(byHand, {}, new Runs())], { topics });
    try {
      const producer = await fx.service({ prefix: 'withdrawn', topics });
      await producer.pushMany(
        declared,
        [0, 1, 2, 3, 4, 5].map((payload) => ({ payload })),
      );
      await eventually(() => runs.payloads.length === 6);
      expect(await after.queue.limits(declared)).toEqual({});
      expect(await after.queue.limits(byHand)).toEqual({ globalConcurrency: 6 });
    } finally {
      await after.app.close();
    }
  });

  it("removes a schedule the module's schedules no longer lists, at startup; keeps those upserted by hand", async () => {
    const topic = uniqueTopic('withdrawn.schedules');
    const every = (name: string) => ({ topic, name, everyMs: 3_600_000, payload: null });
    const names = async (queue: RedisAckQueueService) =>
      (await queue.schedules(topic)).map(({ name, declared }) => `${name}${declared ? ' (declared)' : ''}`);

    const first = await startApp([], { schedules: [every('kept'), every('dropped')] });
    await first.queue.upsertSchedule(topic, 'by-hand', { everyMs: 3_600_000 });
    expect(await names(first.queue)).toEqual(['by-hand', 'dropped (declared)', 'kept (declared)']);
    await first.app.close();

    const second = await startApp([], { schedules: [every('kept')] });
    expect(await names(second.queue)).toEqual(['by-hand', 'kept (declared)']);
    await second.app.close();

    // An app without the option declares nothing and withdraws nothing; an empty list withdraws all.
    const third = await startApp([]);
    expect(await names(third.queue)).toEqual(['by-hand', 'kept (declared)']);
    await third.app.close();
    const fourth = await startApp([], { schedules: [] });
    try {
      expect(await names(fourth.queue)).toEqual(['by-hand']);
    } finally {
      await fourth.app.close();
    }
  });
});
