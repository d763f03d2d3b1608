// Mirrors nestjs/nest integration/microservices/e2e/multicast-redis.spec.ts, with Transport.REDIS
// swapped for RedisAckQueueServer / RedisAckQueueClient and supertest for fetch.
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';
import { useE2eClientOptions } from './support/e2e-client';
import { call, listenOnLoopback } from './support/e2e-http';
import { RedisMulticastController } from './support/redis-multicast.controller';

describe('REDIS transport', () => {
  const fx = useRedis();
  let url: string;
  let app: INestApplication;

  beforeAll(() => useE2eClientOptions({ connection: fx.connection }));

  beforeEach(async () => {
    const module = await Test.createTestingModule({
      controllers: [RedisMulticastController],
    }).compile();

    app = module.createNestApplication({ logger: false });
    app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: fx.connection }) });
    app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: fx.connection }) });
    await app.startAllMicroservices();
    url = await listenOnLoopback(app);
  });

  it(`Multicast (2 subscribers)`, async () => {
    RedisMulticastController.handled = 0;
    // Divergence: Nest's pub/sub reaches both servers (the caller sums two replies, '2'); here
    // the two servers compete for the request's message, so one runs it and the sum is '1'.
    expect(await call(url, 'GET', '/multicast')).toEqual({ status: 200, text: '1' });
    expect(RedisMulticastController.handled).toBe(1);
  });

  afterEach(async () => {
    await app.close();
  });
});
