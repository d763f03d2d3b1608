// Mirrors nestjs/nest integration/microservices/e2e/concurrent-kafka.spec.ts (its apps and its
// "sync sum number wait and force a consumer rebalance" case), with Transport.KAFKA swapped for
// RedisAckQueueServer / RedisAckQueueClient and supertest for fetch. Its first case creates
// Kafka topics and partitions, which this transport does not have.
import { Body, Controller, HttpCode, Inject, type INestApplication, Module, Post } from '@nestjs/common';
import { ClientProxy, ClientsModule, MessagePattern, Payload } from '@nestjs/microservices';
import { NestFactory } from '@nestjs/core';
import type { Observable } from 'rxjs';
import type { RedisAckQueueConnection } from '../../../lib';
import { RedisAckQueueClient, RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';
import { call, listenOnLoopback } from './support/e2e-http';

interface SumDto {
  key: number;
  numbers: number[];
}

@Controller()
class ConcurrentController {
  constructor(@Inject('CONCURRENT_CLIENT') private readonly client: ClientProxy) {}

  @Post('mathSumSyncNumberWait')
  @HttpCode(200)
  mathSumSyncNumberWait(@Body() data: SumDto): Observable<number> {
    return this.client.send<number>('math.sum.sync.number.wait', data.numbers);
  }

  // Nest's messages controller answers after a wait, so requests are in flight when app #1 closes.
  @MessagePattern('math.sum.sync.number.wait')
  async mathSumSyncNumberWaitHandler(@Payload() numbers: number[]): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return numbers.reduce((a, b) => a + b, 0);
  }
}

function concurrentModule(connection: RedisAckQueueConnection) {
  @Module({
    imports: [
      ClientsModule.register([
        { name: 'CONCURRENT_CLIENT', customClass: RedisAckQueueClient, options: { connection } },
      ]),
    ],
    controllers: [ConcurrentController],
  })
  class ConcurrentModule {}
  return ConcurrentModule;
}

describe('Kafka concurrent', () => {
  const numbersOfServers = 3;
  const servers: string[] = [];
  const apps: INestApplication[] = [];
  // Before useRedis: Jest runs afterAll hooks in order, and the apps close before their Redis stops.
  afterAll(async () => {
    await Promise.all(apps.slice(1).map(async (app) => app.close()));
  });
  const fx = useRedis();

  const startServer = async () => {
    const app = await NestFactory.create(concurrentModule(fx.connection), { logger: false });
    app.connectMicroservice({ strategy: new RedisAckQueueServer({ connection: fx.connection }) });
    await app.startAllMicroservices();
    const url = await listenOnLoopback(app);
    // Pushed together: apps[i] serves servers[i] whichever app starts first.
    apps.push(app);
    servers.push(url);
  };

  it(`Start apps`, async () => {
    await Promise.all(
      Array(numbersOfServers)
        .fill(1)
        .map(async () => startServer()),
    );
  });

  it(`/POST (sync sum number wait and force a consumer rebalance)`, async () => {
    await Promise.all(
      servers.map(async (server, index) => {
        // Server #1 closes while #2 and #3 have requests in flight; theirs are answered.
        if (index === 0) {
          await apps[index].close();
          return;
        }
        const payload = { key: index, numbers: [1, index] };
        const result = (1 + index).toString();
        expect(await call(server, 'POST', '/mathSumSyncNumberWait', payload)).toEqual({ status: 200, text: result });
      }),
    );
  });

  it('answers many requests in flight at once, each with its own sum', async () => {
    const live = servers.slice(1);
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        call(live[n % live.length], 'POST', '/mathSumSyncNumberWait', { key: n, numbers: [n, 1000] }),
      ),
    );
    expect(replies).toEqual(Array.from({ length: 30 }, (_, n) => ({ status: 200, text: String(n + 1000) })));
  });
});
