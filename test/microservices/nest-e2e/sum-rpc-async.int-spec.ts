// Mirrors nestjs/nest integration/microservices/e2e/sum-rpc-async.spec.ts: the microservice's
// options given by a factory with injected dependencies, with Transport.TCP swapped for
// RedisAckQueueServer / RedisAckQueueClient.
import { Controller, type INestMicroservice, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  type AsyncOptions,
  ClientsModule,
  MessagePattern,
  type MicroserviceOptions,
  Payload,
} from '@nestjs/microservices';
import type { RedisAckQueueConnection } from '../../../lib';
import { RedisAckQueueClient, RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';

@Controller()
class RpcController {
  @MessagePattern({ cmd: 'sum' })
  sumPayload(@Payload() payload: number[]) {
    return payload.reduce((a, b) => a + b, 0);
  }
}

/** Nest's spec picks a random TCP port at load; here the Redis of the file is known in beforeAll. */
function rpcModule(connection: RedisAckQueueConnection) {
  @Injectable()
  class RpcOptionsProvider {
    getOptions(): MicroserviceOptions {
      return { strategy: new RedisAckQueueServer({ connection }) };
    }
  }

  @Module({
    imports: [
      ClientsModule.register([{ name: 'RPC_CLIENT', customClass: RedisAckQueueClient, options: { connection } }]),
    ],
    controllers: [RpcController],
    providers: [RpcOptionsProvider],
  })
  class RpcModule {}
  return { RpcModule, RpcOptionsProvider };
}

describe('RPC Async transport', () => {
  const fx = useRedis();
  let app: INestMicroservice;
  let client: RedisAckQueueClient;

  beforeEach(async () => {
    const { RpcModule, RpcOptionsProvider } = rpcModule(fx.connection);
    app = await NestFactory.createMicroservice<AsyncOptions<MicroserviceOptions>>(RpcModule, {
      logger: false,
      inject: [RpcOptionsProvider],
      useFactory: (optionsProvider: InstanceType<typeof RpcOptionsProvider>) => optionsProvider.getOptions(),
    });

    await app.listen();
    client = app.get('RPC_CLIENT', { strict: false });
  });

  it(`/POST`, (done) => {
    let retData = 0;
    client.send<number>({ cmd: 'sum' }, [1, 2, 3, 4, 5]).subscribe({
      next: (val) => (retData += val),
      error: done,
      complete: () => {
        expect(retData).toBe(15);
        done();
      },
    });
  });

  afterEach(async () => {
    await app.close();
  });
});
