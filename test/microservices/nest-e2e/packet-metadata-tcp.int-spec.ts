// Mirrors nestjs/nest integration/microservices/e2e/packet-metadata-tcp.spec.ts, with
// Transport.TCP swapped for RedisAckQueueServer / RedisAckQueueClient. Nest 12 only: Nest 11's
// ClientProxy has no dispatch hook (these cases are skipped there).
import { Controller, type INestMicroservice, Module } from '@nestjs/common';
import { ClientProxy, ClientProxyFactory, Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { firstValueFrom } from 'rxjs';
import { RedisAckQueueClient, RedisAckQueueContext, RedisAckQueueServer } from '../../../lib/microservices';
import { useRedis } from '../../support/queue-fixture';

const nest12 = typeof (ClientProxy.prototype as { setOnDispatchHook?: unknown }).setOnDispatchHook === 'function';

@Controller()
class MetadataController {
  static lastEventMetadata: Record<string, string> | undefined;
  static eventReceived: () => void = () => undefined;

  @MessagePattern('echo-metadata')
  echo(@Payload() data: unknown, @Ctx() context: RedisAckQueueContext) {
    return { data, metadata: context.getMetadata() ?? null };
  }

  @EventPattern<string>('record-metadata')
  record(@Ctx() context: RedisAckQueueContext) {
    MetadataController.lastEventMetadata = context.getMetadata();
    MetadataController.eventReceived();
  }
}

@Module({ controllers: [MetadataController] })
class MetadataModule {}

(nest12 ? describe : describe.skip)('Packet metadata (TCP)', () => {
  const fx = useRedis();
  let app: INestMicroservice;
  let client: ClientProxy;

  beforeEach(async () => {
    const module = await Test.createTestingModule({
      imports: [MetadataModule],
    }).compile();

    app = module.createNestMicroservice({
      strategy: new RedisAckQueueServer({ connection: fx.connection }),
      logger: false,
    });
    await app.listen();

    client = ClientProxyFactory.create({ customClass: RedisAckQueueClient, options: { connection: fx.connection } });
    await client.connect();
  });

  afterEach(async () => {
    await client.close();
    await app.close();
  });

  it('delivers what the dispatch hook attached to a request, beside the payload', async () => {
    client.setOnDispatchHook((packet) => {
      packet.metadata = { 'x-request-id': 'trace-1' };
    });

    const reply = await firstValueFrom(client.send<unknown>('echo-metadata', { orderId: 7 }));

    expect(reply).toEqual({
      data: { orderId: 7 },
      metadata: { 'x-request-id': 'trace-1' },
    });
  });

  it('delivers it with an event as well', async () => {
    const received = new Promise<void>((resolve) => {
      MetadataController.eventReceived = resolve;
    });
    client.setOnDispatchHook((packet) => {
      packet.metadata = { 'x-request-id': 'trace-2' };
    });

    await firstValueFrom(client.emit('record-metadata', {}), {
      defaultValue: undefined,
    });
    await received;

    expect(MetadataController.lastEventMetadata).toEqual({
      'x-request-id': 'trace-2',
    });
  });

  it('leaves the context without metadata when no hook is set', async () => {
    const reply = await firstValueFrom(client.send<unknown>('echo-metadata', 'plain'));

    expect(reply).toEqual({ data: 'plain', metadata: null });
  });

  it('calls the hook once per packet, with the pattern and the data', async () => {
    const seen: unknown[] = [];
    client.setOnDispatchHook((packet) => {
      seen.push({ pattern: packet.pattern as unknown, data: packet.data as unknown });
    });

    await firstValueFrom(client.send('echo-metadata', 1));
    await firstValueFrom(client.send('echo-metadata', 2));

    expect(seen).toEqual([
      { pattern: 'echo-metadata', data: 1 },
      { pattern: 'echo-metadata', data: 2 },
    ]);
  });
});
