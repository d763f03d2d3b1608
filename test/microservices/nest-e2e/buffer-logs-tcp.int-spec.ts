// Mirrors nestjs/nest integration/microservices/e2e/buffer-logs-tcp.spec.ts, with Transport.TCP
// swapped for RedisAckQueueServer. Flushing buffered logs at init() is Nest 12's: those two cases
// are skipped on Nest 11.
import { type INestApplication, type INestMicroservice, type LoggerService, Module } from '@nestjs/common';
import { NestApplicationContext, NestFactory } from '@nestjs/core';
import { RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';

/** Nest 12's init() flushes buffered logs (Nest 11 flushes them at listen() only). */
const flushesOnInit =
  typeof (NestApplicationContext.prototype as unknown as { flushLogsIfAutoFlushEnabled?: unknown })
    .flushLogsIfAutoFlushEnabled === 'function';

@Module({})
class AppModule {}

class CollectingLogger implements LoggerService {
  readonly messages: string[] = [];

  log(message: unknown) {
    this.messages.push(String(message));
  }
  error(message: unknown) {
    this.messages.push(String(message));
  }
  warn(message: unknown) {
    this.messages.push(String(message));
  }
}

describe('Buffered logs (microservice)', () => {
  const fx = useRedis();
  let app: INestMicroservice | INestApplication;
  let logger: CollectingLogger;

  beforeEach(() => {
    logger = new CollectingLogger();
  });

  afterEach(async () => {
    await app.close();
  });

  (flushesOnInit ? it : it.skip)(
    'should flush buffered logs on init() when the microservice never listens',
    async () => {
      app = await NestFactory.createMicroservice(AppModule, {
        strategy: new RedisAckQueueServer({ connection: fx.connection }),
        bufferLogs: true,
        logger,
      });
      expect(logger.messages).toEqual([]);

      await app.init();

      expect(logger.messages).toContain('Starting Nest application...');
    },
  );

  it('should keep buffering on init() when autoFlushLogs is false', async () => {
    app = await NestFactory.createMicroservice(AppModule, {
      strategy: new RedisAckQueueServer({ connection: fx.connection }),
      bufferLogs: true,
      autoFlushLogs: false,
      logger,
    });

    await app.init();
    expect(logger.messages).toEqual([]);

    app.flushLogs();
    expect(logger.messages).toContain('Starting Nest application...');
  });

  (flushesOnInit ? it : it.skip)('should flush buffered logs of a hybrid application on init()', async () => {
    const hybrid = await NestFactory.create(AppModule, {
      bufferLogs: true,
      logger,
    });
    app = hybrid;
    hybrid.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: fx.connection }) });
    expect(logger.messages).toEqual([]);

    await hybrid.init();

    expect(logger.messages).toContain('Nest application successfully started');
  });
});
