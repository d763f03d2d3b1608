import { randomBytes } from 'node:crypto';
import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  chainCodecs,
  createCompressionCodec,
  createEncryptionCodec,
  type MessageContext,
  QueueHandler,
  RedisAckQueueModule,
  RedisAckQueueService,
} from '../../lib';
import { testLogger } from '../support/capture-logs';
import { keysHolding } from '../support/key-dumps';
import { eventually, useRedis } from '../support/queue-fixture';

/**
 * The codec options through the Nest module: `forRoot({ codec, topicCodecs })` and `forRootAsync`
 * (keys from a provider, as from a KMS) seal what a decorated handler's topic stores, and the handler
 * gets the payload and headers opened.
 */
const fx = useRedis({ config: ['rdbcompression', 'no'] });
const apps: INestApplicationContext[] = [];
const CANARY = `nest-canary-${randomBytes(4).toString('hex')}`;
const key = randomBytes(32);

const seen: { topic: string; payload: unknown; note: string | undefined }[] = [];

@Injectable()
class Handlers {
  @QueueHandler('codec.sealed')
  sealed(payload: unknown, context: MessageContext) {
    seen.push({ topic: 'codec.sealed', payload, note: context.headers.note });
    return { echo: CANARY };
  }

  @QueueHandler('codec.plain')
  plain(payload: unknown, context: MessageContext) {
    seen.push({ topic: 'codec.plain', payload, note: context.headers.note });
  }
}

async function boot(module: object): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(module as never, { logger: testLogger() });
  await app.init();
  apps.push(app);
  return app;
}

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  seen.length = 0;
});

describe('codecs through the Nest module', () => {
  it('forRoot({ codec, topicCodecs }): the handler reads opened values; Redis holds none of them, but on the null topic', async () => {
    const prefix = 'nestcodec1';
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({
          connection: fx.connection,
          prefix,
          keepCompleted: true,
          codec: chainCodecs(
            createCompressionCodec(),
            createEncryptionCodec({ keys: { k1: key }, currentKeyId: 'k1' }),
          ),
          topicCodecs: { 'codec.plain': null },
        }),
      ],
      providers: [Handlers],
    })
    class Root {}
    const app = await boot(Root);
    const queue = app.get(RedisAckQueueService);
    const { id } = await queue.push('codec.sealed', { text: CANARY }, { headers: { note: CANARY } });
    await queue.push('codec.plain', { text: 'plain-in-clear' }, { headers: { note: 'plain' } });
    await eventually(async () => (await queue.get('codec.sealed', id))?.state === 'completed');
    await eventually(() => seen.length === 2);
    expect(seen).toEqual(
      expect.arrayContaining([
        { topic: 'codec.sealed', payload: { text: CANARY }, note: CANARY },
        { topic: 'codec.plain', payload: { text: 'plain-in-clear' }, note: 'plain' },
      ]),
    );
    expect(await queue.get('codec.sealed', id)).toMatchObject({
      payload: { text: CANARY },
      result: { echo: CANARY },
      sealed: { keyId: 'k1' },
      sealedResult: { keyId: 'k1' },
    });
    expect(await keysHolding(fx.redis, prefix, CANARY)).toEqual([]);
    // The null topic's message is kept as JSON (and the search finds what is there).
    expect(await keysHolding(fx.redis, prefix, 'plain-in-clear')).not.toEqual([]);
  });

  it('forRootAsync: keys resolved by a provider (a KMS) seal and open as given', async () => {
    const prefix = 'nestcodec2';
    let asked = 0;
    @Module({
      imports: [
        RedisAckQueueModule.forRootAsync({
          useFactory: () => ({
            connection: fx.connection,
            prefix,
            codec: createEncryptionCodec({
              keys: async () => {
                asked += 1;
                await new Promise((resolve) => setImmediate(resolve));
                return { 'kms-1': key.toString('base64') };
              },
              currentKeyId: 'kms-1',
            }),
          }),
        }),
      ],
      providers: [Handlers],
    })
    class Root {}
    const app = await boot(Root);
    const queue = app.get(RedisAckQueueService);
    await queue.pushMany(
      'codec.sealed',
      [1, 2, 3].map((n) => ({ payload: { n, text: CANARY }, headers: { note: CANARY } })),
    );
    await eventually(() => seen.length === 3);
    expect(seen.map(({ payload }) => payload)).toEqual(
      expect.arrayContaining([1, 2, 3].map((n) => ({ n, text: CANARY }))),
    );
    expect(asked).toBe(1);
    expect(await keysHolding(fx.redis, prefix, CANARY)).toEqual([]);
  });
});
