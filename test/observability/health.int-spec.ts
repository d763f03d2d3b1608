import { type INestApplication, Module, ServiceUnavailableException } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import {
  RedisAckQueueHealthIndicator,
  type RedisAckQueueHealthOptions,
  RedisAckQueueModule,
  RedisAckQueueService,
} from '../../lib';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { expectLogs } from '../support/capture-logs';
import { wellBefore } from '../support/waits';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';

describe('health indicator (@nestjs/terminus)', () => {
  const fx = useRedis();
  let app: INestApplication;
  let queue: RedisAckQueueService;

  beforeAll(async () => {
    @Module({
      imports: [RedisAckQueueModule.forRoot({ connection: fx.connection }), TerminusModule.forRoot({ logger: false })],
      providers: [RedisAckQueueHealthIndicator],
    })
    class AppModule {}
    app = (await Test.createTestingModule({ imports: [AppModule] }).compile()).createNestApplication({ logger: false });
    await app.init();
    queue = app.get(RedisAckQueueService);
  });
  afterAll(() => app.close());

  /** The terminus check's result: `{ status, info, error, details }`, down or not. */
  async function check(options: RedisAckQueueHealthOptions) {
    const indicator = app.get(RedisAckQueueHealthIndicator);
    try {
      return await app.get(HealthCheckService).check([() => indicator.isHealthy('queue', options)]);
    } catch (error) {
      if (error instanceof ServiceUnavailableException)
        return error.getResponse() as { status: string; details: Record<string, { status: string; reason?: string }> };
      throw error;
    }
  }

  it('is up while Redis answers, consumers run and lag is under its bound', async () => {
    const topic = uniqueTopic();
    const consumer = queue.consume(topic, () => undefined);
    await queue.push(topic, 'x');
    await queue.waitUntilIdle(topic);
    const result = await check({ maxLagMs: { [topic]: 10_000 } });
    await consumer.close();
    expect(result.status).toBe('ok');
    expect(result.details.queue).toMatchObject({ status: 'up', consumers: 1, lagMs: { [topic]: 0 } });
  });

  it('is down when a topic lags over its threshold', async () => {
    const topic = uniqueTopic();
    await queue.push(topic, 'nobody consumes this');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await check({ maxLagMs: { [topic]: 200 } });
    expect(result.status).toBe('error');
    expect(result.details.queue.status).toBe('down');
    expect(result.details.queue.reason).toMatch(
      new RegExp(`Topic "${topic}" lags: its oldest ready message is \\d+ ms old \\(over 200\\)`),
    );
  });

  it('is down when a consumer was wedged: a handler blocked the event loop', async () => {
    const topic = uniqueTopic();
    const consumer = queue.consume(topic, () => {
      const until = Date.now() + 1_500;
      while (Date.now() < until); // a synchronous handler holds the event loop
    });
    const acked = firstValueFrom(queue.events$.pipe(filter((e) => e.topic === topic && e.type === 'acked')));
    await queue.push(topic, 'x');
    await acked;
    const result = await check({ stalledAfterMs: 1_000 });
    await consumer.close();
    expect(result.status).toBe('error');
    expect(result.details.queue.reason).toMatch(
      new RegExp(`consumer of topic "${topic}" was stalled for \\d+ ms in the last minute \\(over 1000\\)`),
    );
    // The same stall under a bound it does not exceed is no reason.
    expect((await check({ stalledAfterMs: 5_000 })).status).toBe('ok');
  });

  it('is down, within the ping bound, when Redis is stopped', async () => {
    expectLogs(/Lost the connection to Redis/, /came back without the data/);
    const topic = uniqueTopic();
    const consumer = queue.consume(topic, () => undefined);
    await fx.server.kill();
    const started = Date.now();
    const result = await check({ pingTimeoutMs: 300 });
    // Its ping bound, not the default command bound of 5 s (or never).
    expect(Date.now() - started).toBeLessThan(wellBefore(DEFAULTS.commandTimeoutMs));
    expect(result.status).toBe('error');
    expect(result.details.queue.reason).toMatch(/^Redis is unreachable: /);
    await fx.server.restart();
    await queue.ping(5_000);
    await consumer.close();
    expect((await check({})).status).toBe('ok');
  });
});
