// Mirrors nestjs/nest integration/microservices/e2e/tcp-reconnect.spec.ts, with ClientTCP and its
// raw server swapped for RedisAckQueueClient / RedisAckQueueServer: a client closed while it
// connects, or once connected, and connected again, gets a streamed reply whole over its new
// connections, and a further connect() keeps them. Nest's spec holds the old socket half-open
// and counts the server's sockets; this transport has no socket of its own to hold, so the old
// connections are checked closed instead (the old service refuses a push).
import { Controller, type INestMicroservice } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { from, lastValueFrom, type Observable, toArray } from 'rxjs';
import { QueueClosedError, type RedisAckQueueService } from '../../../lib';
import { RedisAckQueueClient, RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';

@Controller()
class StreamController {
  @MessagePattern('stream')
  stream(): Observable<string> {
    return from(['a', 'b']);
  }
}

describe('TCP client reconnect', () => {
  const fx = useRedis();
  let server: INestMicroservice;
  let client: RedisAckQueueClient;

  beforeEach(async () => {
    const module = await Test.createTestingModule({ controllers: [StreamController] }).compile();
    server = module.createNestMicroservice({
      strategy: new RedisAckQueueServer({ connection: fx.connection }),
      logger: false,
    });
    await server.listen();
    client = new RedisAckQueueClient({ connection: fx.connection });
  });

  afterEach(async () => {
    await client?.close();
    await server.close();
  });

  for (const closeWhileConnecting of [false, true]) {
    it(`should preserve streamed responses after closing ${
      closeWhileConnecting ? 'a connecting' : 'a connected'
    } socket and reconnecting`, async () => {
      const connectA = client.connect();
      const serviceA = client.unwrap<RedisAckQueueService>();
      if (!closeWhileConnecting) {
        await connectA;
      }

      const closedA = client.close();
      const connectB = client.connect();
      const serviceB = client.unwrap<RedisAckQueueService>();
      // Divergence: a connect() that close() cut short rejects with QueueClosedError (Nest's
      // TCP connect resolves once its socket is up, closed or not); one that had finished stays resolved.
      const [settledA] = await Promise.allSettled([connectA, connectB, closedA]);
      if (closeWhileConnecting) {
        expect(settledA.status === 'fulfilled' || (settledA.reason as unknown) instanceof QueueClosedError).toBe(true);
      } else {
        expect(settledA.status).toBe('fulfilled');
      }
      await connectB;

      const response = await lastValueFrom(client.send<string>('stream', {}).pipe(toArray())).then(
        (values) => ({ values }),
        (error: unknown) => ({ error }),
      );

      expect(response).toEqual({ values: ['a', 'b'] });
      expect(client.unwrap()).toBe(serviceB);
      await client.connect();
      expect(client.unwrap()).toBe(serviceB);
      // In place of Nest's count of two server sockets: the first connections are closed.
      expect(serviceB).not.toBe(serviceA);
      await expect(serviceA.push('stream', {})).rejects.toBeInstanceOf(QueueClosedError);
    });
  }
});
