import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientProxy,
  ClientsModule,
  Ctx,
  EventPattern,
  MessagePattern,
  Payload,
  RpcException,
  Server,
} from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import type { PushResult, RedisAckQueueConnection } from '../../lib';
import { RedisAckQueueClient, RedisAckQueueContext, RedisAckQueueServer } from '../../lib/microservices';
import { deferred } from '../support/async-helpers';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

// Set by jest.config.js: Nest 12 from node_modules, or Nest 11 from test/nest11 (npm run test:nest11).
const { ACKQ_NEST_MAJOR: major, ACKQ_NEST_DIR: folder } = globalThis as unknown as {
  ACKQ_NEST_MAJOR: number;
  ACKQ_NEST_DIR: string;
};

const CLIENT = 'NEST_VERSIONS_CLIENT';
const created = uniqueTopic('versions.created');
const flaky = uniqueTopic('versions.flaky');

/**
 * The transport on the Nest major of the run (12 by default, 11 with `npm run test:nest11`): a
 * microservice served by RedisAckQueueServer and a RedisAckQueueClient from ClientsModule, one
 * emit and one send; and an event handler's failure reaching the transport (retried), which Nest
 * 12 reports through `propagatesEventHandlerErrors` and Nest 11, without it, the same way.
 */
describe('the microservices transport on the Nest major of the run', () => {
  let app: INestMicroservice | undefined;
  // Declared before useRedis: Jest runs afterAll hooks in order, and the app (its server and
  // client) must drain and close before the Redis they use stops.
  afterAll(async () => {
    await app?.close();
  });
  const redis = useRedis();
  const delivered = deferred<{ data: unknown; attempt: number; topic: string }>();
  const retried = deferred<number>();
  let client: RedisAckQueueClient;

  @Controller()
  class Handlers {
    @EventPattern<string>(created)
    created(@Payload() data: unknown, @Ctx() context: RedisAckQueueContext): void {
      delivered.resolve({ data, attempt: context.attempt, topic: context.getTopic() });
    }

    @EventPattern<string>(flaky, { backoff: { type: 'fixed', delayMs: 0 } })
    flaky(@Ctx() context: RedisAckQueueContext): void {
      if (context.attempt === 1) throw new RpcException('first attempt fails');
      retried.resolve(context.attempt);
    }

    @MessagePattern({ cmd: 'versions.double' })
    double(@Payload() value: number): number {
      return value * 2;
    }
  }

  function appModule(connection: RedisAckQueueConnection) {
    @Module({
      imports: [ClientsModule.register([{ name: CLIENT, customClass: RedisAckQueueClient, options: { connection } }])],
      controllers: [Handlers],
    })
    class AppModule {}
    return AppModule;
  }

  beforeAll(async () => {
    const strategy = new RedisAckQueueServer({ connection: redis.connection });
    app = await NestFactory.createMicroservice(appModule(redis.connection), { strategy, logger: false });
    await app.listen();
    client = app.get<RedisAckQueueClient>(CLIENT);
  });

  it.each(['@nestjs/common', '@nestjs/core', '@nestjs/microservices'])('runs %s of the major it claims', (name) => {
    // Real paths: node_modules may be a link (a worktree's to the main checkout's).
    expect(realpathSync(require.resolve(name)).startsWith(realpathSync(join(folder, name)))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(folder, name, 'package.json'), 'utf8')) as { version: string };
    expect(manifest.version.split('.')[0]).toBe(String(major));
  });

  it("extends that copy's Server and ClientProxy", () => {
    expect(Object.getPrototypeOf(RedisAckQueueServer)).toBe(Server);
    expect(Object.getPrototypeOf(RedisAckQueueClient)).toBe(ClientProxy);
    expect(client).toBeInstanceOf(RedisAckQueueClient);
  });

  it('delivers an emitted event to its @EventPattern handler', async () => {
    const pushed = await lastValueFrom(client.emit<PushResult>(created, { order: 1 }));
    expect(pushed).toMatchObject({ duplicate: false });
    expect(await delivered.promise).toEqual({ data: { order: 1 }, attempt: 1, topic: created });
  });

  it("answers a send with the @MessagePattern handler's value", async () => {
    expect(await firstValueFrom(client.send<number>({ cmd: 'versions.double' }, 21))).toBe(42);
  });

  it('retries an event whose handler failed: the failure reaches the transport', async () => {
    await lastValueFrom(client.emit(flaky, {}));
    expect(await retried.promise).toBe(2);
  });
});
