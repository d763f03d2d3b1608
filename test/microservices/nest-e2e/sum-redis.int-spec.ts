// Mirrors nestjs/nest integration/microservices/e2e/sum-redis.spec.ts, with Transport.REDIS
// swapped for RedisAckQueueServer / RedisAckQueueClient and supertest for fetch.
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { RedisAckQueueServer } from '../../../lib/microservices';
import { eventually, useRedis } from '../../support/queue-fixture';
import { useE2eClientOptions } from './support/e2e-client';
import { call, listenOnLoopback } from './support/e2e-http';
import { RedisController } from './support/redis.controller';

describe('REDIS transport', () => {
  const fx = useRedis();
  let url: string;
  let app: INestApplication;

  beforeAll(() => useE2eClientOptions({ connection: fx.connection }));

  beforeEach(async () => {
    const module = await Test.createTestingModule({
      controllers: [RedisController],
    }).compile();

    app = module.createNestApplication({ logger: false });
    app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: fx.connection }) });
    await app.startAllMicroservices();
    url = await listenOnLoopback(app);
  });

  it(`/POST`, async () => {
    expect(await call(url, 'POST', '/?command=sum', [1, 2, 3, 4, 5])).toEqual({ status: 200, text: '15' });
  });

  it(`/POST (Promise/async)`, async () => {
    expect(await call(url, 'POST', '/?command=asyncSum', [1, 2, 3, 4, 5])).toEqual({ status: 200, text: '15' });
  });

  it(`/POST (Observable stream)`, async () => {
    expect(await call(url, 'POST', '/?command=streamSum', [1, 2, 3, 4, 5])).toEqual({ status: 200, text: '15' });
  });

  it(`/POST (concurrent)`, async () => {
    const batches = Array.from({ length: 10 }, (_, i) => Array.from({ length: 10 }, (__, k) => i * 10 + k + 1));
    expect(await call(url, 'POST', '/concurrent', batches)).toEqual({ status: 200, text: 'true' });
  });

  it(`/POST (streaming)`, async () => {
    expect(await call(url, 'POST', '/stream', [1, 2, 3, 4, 5])).toEqual({ status: 200, text: '15' });
  });

  it(`/POST (event notification)`, async () => {
    await call(url, 'POST', '/notify', [1, 2, 3, 4, 5]);
    // Nest's spec looks after a fixed second; this polls until the handler has run.
    await eventually(() => RedisController.IS_NOTIFIED);
    expect(RedisController.IS_NOTIFIED).toBe(true);
  });

  afterEach(async () => {
    await app.close();
  });
});
