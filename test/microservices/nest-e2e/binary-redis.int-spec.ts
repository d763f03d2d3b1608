// Mirrors nestjs/nest integration/microservices/e2e/binary-redis.spec.ts, with Transport.REDIS
// swapped for RedisAckQueueServer / RedisAckQueueClient.
import { Controller, type INestApplication, type INestMicroservice } from '@nestjs/common';
import { ClientsModule, type Deserializer, type IncomingResponse, MessagePattern } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { lastValueFrom } from 'rxjs';
import { RedisAckQueueClient, RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';

/**
 * Divergence: Nest's spec answers from a raw subscriber that writes Nest's Redis wire format
 * (`<id>:<channel>:<bytes>`) and reads it with `returnBuffers`. This transport's wire is its own
 * and a reply is JSON text, so a handler answers and a serializer pair carries the bytes: the
 * server's serializer writes them as base64, and the client's deserializer (the spec's
 * BinaryDeserializer) turns them back into a Buffer.
 */
class BinaryDeserializer implements Deserializer<{ id: string; response: string }, IncomingResponse> {
  deserialize(value: { id: string; response: string }): IncomingResponse {
    return {
      id: value.id,
      isDisposed: true,
      err: null,
      response: Buffer.from(value.response, 'base64'),
    };
  }
}

const base64Serializer = {
  serialize: (packet: { response?: unknown }) =>
    Buffer.isBuffer(packet.response) ? { ...packet, response: packet.response.toString('base64') } : packet,
};

@Controller()
class BinaryController {
  @MessagePattern('binary')
  async reply(data: string): Promise<Buffer> {
    const delay = data === 'slow' ? 25 : 0;
    if (delay > 0) {
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    return data === 'bytes' ? Buffer.from([0, 1, 2, 3, 255]) : Buffer.from(`${data}-replied`);
  }
}

describe('REDIS transport', () => {
  const fx = useRedis();
  let app: INestApplication;
  let responder: INestMicroservice;
  let client: RedisAckQueueClient;

  beforeEach(async () => {
    const module = await Test.createTestingModule({
      imports: [
        ClientsModule.register({
          clients: [
            {
              name: 'REDIS_SERVICE',
              customClass: RedisAckQueueClient,
              options: { connection: fx.connection, deserializer: new BinaryDeserializer() },
            },
          ],
        }),
      ],
    }).compile();

    app = module.createNestApplication({ logger: false });

    const responderModule = await Test.createTestingModule({ controllers: [BinaryController] }).compile();
    responder = responderModule.createNestMicroservice({
      strategy: new RedisAckQueueServer({ connection: fx.connection, serializer: base64Serializer }),
      logger: false,
    });
    await responder.listen();

    client = app.get<RedisAckQueueClient>('REDIS_SERVICE');

    await client.connect();

    await app.init();
  });

  it('should return a raw binary payload', async () => {
    const data = await lastValueFrom(client.send<Buffer>('binary', 'data'));
    expect(Buffer.isBuffer(data)).toBe(true);
    expect(data).toEqual(Buffer.from('data-replied'));
  });

  it('should route concurrent raw binary replies to the matching request', async () => {
    const [slowResponse, fastResponse] = await Promise.all([
      lastValueFrom(client.send<Buffer>('binary', 'slow')),
      lastValueFrom(client.send<Buffer>('binary', 'fast')),
    ]);
    expect(Buffer.isBuffer(slowResponse)).toBe(true);
    expect(Buffer.isBuffer(fastResponse)).toBe(true);
    expect(slowResponse).toEqual(Buffer.from('slow-replied'));
    expect(fastResponse).toEqual(Buffer.from('fast-replied'));
  });

  it('should preserve non-utf8 bytes in the raw binary payload', async () => {
    const data = await lastValueFrom(client.send<Buffer>('binary', 'bytes'));
    expect(Buffer.isBuffer(data)).toBe(true);
    expect(data).toEqual(Buffer.from([0, 1, 2, 3, 255]));
  });

  afterEach(async () => {
    await app.close();
    await client.close();
    await responder.close();
  });
});
