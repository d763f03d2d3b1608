// Mirrors nestjs/nest integration/microservices/e2e/hybrid-shutdown-hooks.spec.ts, with
// Transport.TCP swapped for RedisAckQueueServer. Nest 11 keeps a connected microservice's signal
// listener after close() (Nest 12's NestMicroservice#close detaches it): skipped there.
import type { INestApplication, INestMicroservice } from '@nestjs/common';
import { NestMicroservice } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';
import { AppModule } from './support/app.module';
import { useE2eClientOptions } from './support/e2e-client';

/** Whether this Nest's NestMicroservice#close detaches the signal listeners of a connected one. */
const detachesOnClose = NestMicroservice.prototype.close.toString().includes('unsubscribeFromProcessSignals');

(detachesOnClose ? describe : describe.skip)('Hybrid application shutdown hooks', () => {
  const fx = useRedis();
  let app: INestApplication | undefined;

  beforeAll(() => useE2eClientOptions({ connection: fx.connection }));

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('should remove the process signal listeners registered by a connected microservice', async () => {
    const baseline = process.listenerCount('SIGTERM');

    const module = await Test.createTestingModule({
      imports: [AppModule],
    }).compile();

    app = module.createNestApplication({ logger: false });

    const microservice: INestMicroservice = app.connectMicroservice({
      strategy: new RedisAckQueueServer({ connection: fx.connection }),
    });

    microservice.enableShutdownHooks(['SIGTERM']);
    expect(process.listenerCount('SIGTERM')).toBe(baseline + 1);

    await app.startAllMicroservices();
    await app.init();

    await app.close();
    app = undefined;

    expect(process.listenerCount('SIGTERM')).toBe(baseline);
  });
});
