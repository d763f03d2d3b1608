// Mirrors nestjs/nest integration/microservices/e2e/broadcast-redis.spec.ts, with Transport.REDIS
// swapped for RedisAckQueueServer / RedisAckQueueClient and supertest for fetch.
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';
import { useE2eClientOptions } from './support/e2e-client';
import { call, listenOnLoopback } from './support/e2e-http';
import { RedisBroadcastController } from './support/redis-broadcast.controller';

describe('REDIS transport', () => {
  const fx = useRedis();
  let url: string;
  let app: INestApplication;

  beforeAll(() => useE2eClientOptions({ connection: fx.connection }));

  beforeEach(async () => {
    const module = await Test.createTestingModule({
      controllers: [RedisBroadcastController],
    }).compile();

    app = module.createNestApplication({ logger: false });
    app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: fx.connection }) });
    app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: fx.connection }) });
    await app.startAllMicroservices();
    url = await listenOnLoopback(app);
  });

  it(`Broadcast (2 subscribers)`, async () => {
    RedisBroadcastController.handled = 0;
    // Divergence: Nest's pub/sub reaches both servers (the caller sums two replies, '2'); here
    // the two servers compete for the request's message, so one runs it and the sum is '1'.
    expect(await call(url, 'GET', '/broadcast')).toEqual({ status: 200, text: '1' });
    expect(RedisBroadcastController.handled).toBe(1);
  });

  afterEach(async () => {
    await app.close();
  });
});
