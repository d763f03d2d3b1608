// Mirrors nestjs/nest integration/microservices/e2e/global-config-applied.spec.ts, with
// Transport.TCP swapped for RedisAckQueueServer / RedisAckQueueClient and supertest for fetch.
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';
import { AppModule } from './support/app.module';
import { useE2eClientOptions } from './support/e2e-client';
import { call, listenOnLoopback } from './support/e2e-http';
import { SpyFilter, SpyGuard, SpyInterceptor, SpyPipe } from './support/spies';

describe('Global Config is applied', () => {
  const fx = useRedis();
  let url: string;
  let app: INestApplication;

  let guard: SpyGuard;
  let filter: SpyFilter;
  let interceptor: SpyInterceptor;
  let pipe: SpyPipe;

  beforeAll(() => useE2eClientOptions({ connection: fx.connection }));

  beforeEach(async () => {
    const module = await Test.createTestingModule({
      imports: [AppModule],
    }).compile();

    app = module.createNestApplication({ logger: false });
    // Not a transport divergence: since Nest 11 a connected microservice registers its handlers
    // at connectMicroservice(), before the global enhancers below, unless its initialization is
    // deferred (Nest 12's own TCP transport fails this spec without it as well).
    const microservice = app.connectMicroservice(
      { strategy: new RedisAckQueueServer({ connection: fx.connection }) },
      { deferInitialization: true },
    );

    guard = new SpyGuard();
    microservice.useGlobalGuards(guard);

    filter = new SpyFilter();
    microservice.useGlobalFilters(filter);

    interceptor = new SpyInterceptor();
    microservice.useGlobalInterceptors(interceptor);

    pipe = new SpyPipe();
    microservice.useGlobalPipes(pipe);

    await app.startAllMicroservices();
    url = await listenOnLoopback(app);
  });

  it(`Guard called`, async () => {
    await call(url, 'POST', '/?command=sum', [1, 2, 3, 4, 5]);

    expect(guard.called).toBe(true);
  });

  it(`Filter called`, async () => {
    await call(url, 'POST', '/?command=exception', [1, 2, 3, 4, 5]);

    expect(filter.called).toBe(true);
  });

  it(`Interceptor called`, async () => {
    await call(url, 'POST', '/?command=sum', [1, 2, 3, 4, 5]);

    expect(interceptor.called).toBe(true);
  });

  it(`Pipe called`, async () => {
    await call(url, 'POST', '/?command=sum', [1, 2, 3, 4, 5]);

    expect(pipe.called).toBe(true);
  });

  afterEach(async () => {
    await app.close();
  });
});
