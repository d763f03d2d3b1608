import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Redis } from 'ioredis';
import { QueueHandler, RedisAckQueueModule, RedisAckQueueService } from '../../lib';
import { captureLogs, expectLogs, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const CONSUMED = uniqueTopic('nest.consumed');
const SCHEDULED = uniqueTopic('nest.scheduled');

@Injectable()
class Handlers {
  @QueueHandler(CONSUMED)
  handle(): void {}
}

/**
 * A Nest app's declarations (the module's `schedules`, the limits of `topics.<name>` its
 * handlers write) come back after Redis lost the data under the running app.
 */
describe('a Nest app after Redis lost the data', () => {
  const fx = useRedis();
  expectLogs(/^Lost the connection to Redis/, /^Consumer of ".*" paused/, /came back without the data/);

  it("upserts the module's schedules and writes its handlers' limits again, warning once", async () => {
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({
          connection: fx.connection,
          prefix: 'nestlost',
          drainMs: 0,
          topics: { [CONSUMED]: { globalConcurrency: 2 } },
          schedules: [{ topic: SCHEDULED, name: 'every-hour', everyMs: 3_600_000, payload: null }],
        }),
      ],
      providers: [Handlers],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: testLogger() });
    try {
      const queue = app.get(RedisAckQueueService);
      const declared = async () => {
        try {
          const schedules = (await queue.schedules()).map(({ topic, name }) => `${topic}/${name}`);
          const limits = await queue.limits(CONSUMED);
          return schedules.join() === `${SCHEDULED}/every-hour` && limits.globalConcurrency === 2;
        } catch {
          return false;
        }
      };
      await eventually(declared);
      const logs = captureLogs();
      try {
        await (fx.redis as Redis).flushall();
        await (fx.redis as Redis).call('CLIENT', 'KILL', 'TYPE', 'normal');
        await eventually(declared);
        await eventually(() => logs.lines.some((line) => line.includes('prefix "nestlost"')));
        expect(logs.lines.filter((line) => line.includes('came back without the data'))).toEqual([
          expect.stringMatching(
            /^warn .*prefix "nestlost".*: declared again 1 schedule\(s\), the limits of 1 consumed/,
          ),
        ]);
      } finally {
        logs.restore();
      }
    } finally {
      await app.close();
    }
  });
});
