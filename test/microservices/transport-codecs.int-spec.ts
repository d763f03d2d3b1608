import { randomBytes } from 'node:crypto';
import { Controller, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { createEncryptionCodec, type Codec, type RedisAckQueueService } from '../../lib';
import { RedisAckQueueClient, RedisAckQueueServer, REPLY_TO_HEADER, REPLY_TTL_HEADER } from '../../lib/microservices';
import { decodeReply } from '../../lib/microservices/reply-wire';
import { internalsOf } from '../../lib/queue/queue-internals';
import { deferred } from '../support/async-helpers';
import { keysHolding } from '../support/key-dumps';
import { eventually, useRedis } from '../support/queue-fixture';

/**
 * The transport's requests are pushes, sealed by the topic's codec as any push; their replies are
 * sealed too, where they are stored and where they are published whole, and opened by the caller.
 */

const codec = (): Codec => createEncryptionCodec({ keys: { k1: Buffer.alloc(32, 7) }, currentKeyId: 'k1' });

let holding = deferred();
let release = deferred();
let hold = false;

@Controller()
class EchoHandlers {
  @MessagePattern('codec.echo')
  async echo(@Payload() data: { secret: string }) {
    if (hold) {
      holding.resolve();
      await release.promise;
    }
    return { echo: `${data.secret}-reply` };
  }
}

@Module({ controllers: [EchoHandlers] })
class EchoModule {}

describe('the transport with a codec', () => {
  const fx = useRedis({ config: ['rdbcompression', 'no'] });
  let apps = 0;

  /** A server and a client on a prefix of their own; the published notices of its caller channels. */
  async function setup(options: { server?: Codec; client?: Codec }) {
    const prefix = `codec-transport-${process.pid}-${++apps}x`;
    const server = new RedisAckQueueServer({ connection: fx.connection, prefix, codec: options.server });
    const app: INestMicroservice = await NestFactory.createMicroservice(EchoModule, {
      strategy: server,
      logger: false,
    });
    await app.listen();
    const client = new RedisAckQueueClient({ connection: fx.connection, prefix, codec: options.client });
    const published: string[] = [];
    const listener = fx.client();
    await listener.psubscribe(`${prefix}:reply-to:*`);
    listener.on('pmessage', (_pattern: string, _channel: string, text: string) => published.push(text));
    fx.closers.push(
      () => app.close(),
      () => client.close(),
      () => Promise.resolve(listener.disconnect()),
    );
    return { prefix, client, published, queue: server.unwrap<RedisAckQueueService>() };
  }

  const send = (client: RedisAckQueueClient, secret: string) =>
    firstValueFrom(client.send<{ echo: string }>('codec.echo', { secret }));

  it('round-trips a request and its reply, and neither is readable in Redis or on the channel', async () => {
    const { prefix, client, published } = await setup({ server: codec(), client: codec() });
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    holding = deferred();
    release = deferred();
    hold = true;
    const reply = send(client, canary);
    try {
      await holding.promise;
      // The request waits, leased: its payload is sealed.
      expect(await keysHolding(fx.redis, prefix, canary)).toEqual([]);
    } finally {
      hold = false;
      release.resolve();
    }
    expect(await reply).toEqual({ echo: `${canary}-reply` });
    // On a cluster the notice may reach the listener's node after the caller's.
    await eventually(() => published.length > 0);
    // Published whole: `<sealed reply>\n<id>`, the reply `~` and base64.
    for (const text of published) {
      expect(text).not.toContain(canary);
      expect(text).toMatch(/^~[A-Za-z0-9+/]+=*\n/);
    }
    expect(await keysHolding(fx.redis, prefix, canary)).toEqual([]);
  });

  it('stores a reply sealed for a caller that takes it, which opens it', async () => {
    const { prefix, queue, published } = await setup({ server: codec() });
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    const { replies } = internalsOf(queue);
    const channel = replies.newChannel();
    // A caller that asks for ids only (no inline header): the reply is stored, its id published.
    const { id } = await queue.push(
      'codec.echo',
      { secret: canary },
      { headers: { [REPLY_TO_HEADER]: channel, [REPLY_TTL_HEADER]: '60000' } },
    );
    await eventually(() => published.includes(id));
    const stored = await fx.redis.get(`{${prefix}:codec.echo}:reply:${id}`);
    expect(stored).toMatch(/^~/);
    expect(await keysHolding(fx.redis, prefix, canary)).toEqual([]);
    const taken = await replies.take('codec.echo', { id });
    expect(decodeReply(await replies.open('codec.echo', taken!))).toEqual({ values: [{ echo: `${canary}-reply` }] });
  });

  it('ends a request with PayloadDecodeError when the caller lacks the codec of its reply', async () => {
    const { client } = await setup({ server: codec() });
    await expect(send(client, 'not secret')).rejects.toMatchObject({
      code: 'PAYLOAD_UNDECODABLE',
      reason: 'no-codec',
    });
  });

  it('publishes and stores the reply readable without a codec (the control)', async () => {
    const { client, published } = await setup({});
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    expect(await send(client, canary)).toEqual({ echo: `${canary}-reply` });
    await eventually(() => published.some((text) => text.includes(`${canary}-reply`)));
  });
});
