import { AsyncLocalStorage } from 'node:async_hooks';
import { Controller, type INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  type BaseRpcContext,
  ClientProxy,
  Ctx,
  EventPattern,
  MessagePattern,
  Payload,
  Server,
} from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom, of, toArray } from 'rxjs';
import type { RedisAckQueueEvent } from '../../lib';
import {
  DuplicateRequestError,
  METADATA_HEADER,
  RedisAckQueueClient,
  RedisAckQueueContext,
  RedisAckQueueRecord,
  RedisAckQueueServer,
  REDIS_ACK_QUEUE_TRANSPORT,
} from '../../lib/microservices';
import { deferred } from '../support/async-helpers';
import { eventually, useRedis } from '../support/queue-fixture';

/**
 * Nest 12's contract with a transport, held by this one: packet metadata, the processing
 * hooks, the serializer and deserializer options, `on()`, and requests that share an id. The
 * specs ported from nestjs/nest are in nest-e2e/, one file per spec.
 */

/** Nest 12 (setOnDispatchHook, the processing hooks); Nest 11 has neither (these tests are skipped there). */
const nest12 = typeof (ClientProxy.prototype as { setOnDispatchHook?: unknown }).setOnDispatchHook === 'function';
const hooksAvailable =
  typeof (Server.prototype as { setOnProcessingStartHook?: unknown }).setOnProcessingStartHook === 'function';

const seen: unknown[] = [];
let gate = deferred();
const store = new AsyncLocalStorage<string>();

@Controller()
class ContractHandlers {
  // What on() counts (Nest's sum-redis patterns are in nest-e2e/sum-redis.int-spec.ts).
  @MessagePattern({ cmd: 'sum' })
  sum(@Payload() data: number[]): number {
    return data.reduce((a, b) => a + b, 0);
  }

  // The processing hooks: what the start hook set is what the handler sees.
  @MessagePattern('hooked.request')
  hookedRequest(@Payload() n: number) {
    seen.push(`handler ${store.getStore()}`);
    return n * 2;
  }

  @EventPattern<string>('hooked.failing', { maxAttempts: 1 })
  hookedFailing(@Payload() _data: unknown) {
    seen.push(`handler ${store.getStore()}`);
    throw new Error('down');
  }

  // Requests that share an id.
  @MessagePattern('held')
  async held(@Payload() n: number, @Ctx() context: RedisAckQueueContext) {
    seen.push(`held ${n}`);
    await gate.promise;
    return { n, aborted: context.signal.aborted };
  }

  // A string pattern that is an object's JSON.
  @MessagePattern('{"cmd":"json-text"}')
  jsonText(@Payload() n: number) {
    return n + 1;
  }
}

@Module({ controllers: [ContractHandlers] })
class ContractModule {}

describe("the transport against Nest 12's contract", () => {
  const fx = useRedis();
  let app: INestMicroservice;
  let server: RedisAckQueueServer;
  let client: RedisAckQueueClient;
  const hookCalls: unknown[] = [];

  beforeAll(async () => {
    server = new RedisAckQueueServer({ connection: fx.connection, leaseMs: 5_000 });
    if (hooksAvailable) {
      // What instrumentation does: the handling runs inside the hook's own async context.
      server.setOnProcessingStartHook((transportId, context, done) => {
        const rpc = context as RedisAckQueueContext;
        hookCalls.push(['start', transportId, rpc instanceof RedisAckQueueContext, rpc.getPattern()]);
        void store.run(`in span of ${rpc.getPattern()}`, done);
      });
      server.setOnProcessingEndHook((transportId, context) => {
        hookCalls.push(['end', transportId, (context as BaseRpcContext as RedisAckQueueContext).getPattern()]);
      });
    }
    app = await NestFactory.createMicroservice(ContractModule, { strategy: server, logger: false });
    await app.listen();
    client = new RedisAckQueueClient({ connection: fx.connection, timeoutMs: 20_000 });
    fx.closers.push(
      () => app.close(),
      () => client.close(),
    );
  });

  // Nest's own packet-metadata cases are in nest-e2e/packet-metadata-tcp.int-spec.ts.
  (nest12 ? describe : describe.skip)('packet metadata', () => {
    afterEach(() => client.setOnDispatchHook(() => undefined));

    it('carries the metadata in its own header, beside the caller’s headers', async () => {
      client.setOnDispatchHook((packet) => {
        packet.metadata = { tenant: 'acme' };
      });
      const { id } = await lastValueFrom(
        client.emit<{ id: string }>('parked', new RedisAckQueueRecord({}, { headers: { 'x-own': '1' } })),
      );
      const message = await server.unwrap().get('parked', id);
      expect(message?.headers).toEqual({ 'x-own': '1', [METADATA_HEADER]: '{"tenant":"acme"}' });
    });
  });

  // Nest's own Redis transport calls both hooks around each handling (Server#handleEvent, #handleRequest).
  (hooksAvailable ? describe : describe.skip)('processing hooks', () => {
    beforeEach(() => {
      hookCalls.length = 0;
      seen.length = 0;
    });

    it('wrap a request: start, the handler inside what the start hook set, then end', async () => {
      expect(await firstValueFrom(client.send<number>('hooked.request', 21))).toBe(42);
      expect(hookCalls).toEqual([
        ['start', REDIS_ACK_QUEUE_TRANSPORT, true, 'hooked.request'],
        ['end', REDIS_ACK_QUEUE_TRANSPORT, 'hooked.request'],
      ]);
      expect(seen).toEqual(['handler in span of hooked.request']);
    });

    it("wrap a failing event, end included, and leave its failure the transport's (dead-lettered)", async () => {
      const { id } = await lastValueFrom(client.emit<{ id: string }>('hooked.failing', {}));
      const letter = await eventually(async () =>
        (await server.unwrap().deadLetters('hooked.failing')).find((each) => each.id === id),
      );
      expect(letter).toMatchObject({ reason: 'failed', attempt: 1 });
      expect(hookCalls).toEqual([
        ['start', REDIS_ACK_QUEUE_TRANSPORT, true, 'hooked.failing'],
        ['end', REDIS_ACK_QUEUE_TRANSPORT, 'hooked.failing'],
      ]);
      expect(seen).toEqual(['handler in span of hooked.failing']);
    });
  });

  describe('on()', () => {
    it('calls a listener added twice once, and stops when the returned function is called', async () => {
      const heard: string[] = [];
      const witnessed: string[] = [];
      const listener = (event: RedisAckQueueEvent) => heard.push(event.type);
      const offWitness = server.on('acked', (event) => witnessed.push(event.type));
      const off = server.on('acked', listener);
      const again = server.on('acked', listener);
      const offClient = client.on('pushed', listener);
      expect(await firstValueFrom(client.send({ cmd: 'sum' }, [1]))).toBe(1);
      await eventually(() => witnessed.length === 1);
      off();
      again();
      offClient();
      expect(await firstValueFrom(client.send({ cmd: 'sum' }, [2]))).toBe(2);
      await eventually(() => witnessed.length === 2);
      offWitness();
      expect(heard).toEqual(['pushed', 'acked']);
    });
  });

  describe('requests that share an id', () => {
    it('refuses a second send of an id this client still waits on, and the first gets its reply', async () => {
      gate = deferred();
      seen.length = 0;
      const first = firstValueFrom(client.send('held', new RedisAckQueueRecord(1, { id: 'same-1' })));
      await eventually(() => seen.includes('held 1'));
      const second = await firstValueFrom(
        client.send<unknown>('held', new RedisAckQueueRecord(2, { id: 'same-1' })),
      ).catch((error: unknown) => error);
      expect(second).toBeInstanceOf(DuplicateRequestError);
      expect(second).toMatchObject({ code: 'DUPLICATE_REQUEST', topic: 'held', id: 'same-1' });
      gate.resolve();
      // The first request was not cancelled: its handler's signal never aborted.
      expect(await first).toEqual({ n: 1, aborted: false });
      expect(seen).toEqual(['held 1']);
    });

    it("refuses a send of an id another client's request holds, without cancelling it", async () => {
      gate = deferred();
      seen.length = 0;
      const other = new RedisAckQueueClient({ connection: fx.connection, timeoutMs: 20_000 });
      fx.closers.push(() => other.close());
      const first = firstValueFrom(client.send('held', new RedisAckQueueRecord(1, { id: 'same-2' })));
      await eventually(() => seen.includes('held 1'));
      const second = await firstValueFrom(
        other.send<unknown>('held', new RedisAckQueueRecord(2, { id: 'same-2' })),
      ).catch((error: unknown) => error);
      expect(second).toBeInstanceOf(DuplicateRequestError);
      gate.resolve();
      expect(await first).toEqual({ n: 1, aborted: false });
      expect(seen).toEqual(['held 1']);
    });
  });

  it("reaches a handler of a string pattern that is an object's JSON, by that string or by the object", async () => {
    // Without a consumer of its topic the string's send would wait out its timeout.
    const byString = new RedisAckQueueRecord(1, { timeoutMs: 10_000 });
    expect(await firstValueFrom(client.send<number>('{"cmd":"json-text"}', byString))).toBe(2);
    expect(await firstValueFrom(client.send<number>({ cmd: 'json-text' }, 2))).toBe(3);
  });
});

describe('the serializer and deserializer options', () => {
  const fx = useRedis();
  const bodies: unknown[] = [];

  @Controller()
  class Doubler {
    @MessagePattern('ser.double')
    double(@Payload() n: number, @Ctx() context: RedisAckQueueContext) {
      return { doubled: n * 2, metadata: context.getMetadata() ?? null };
    }

    @MessagePattern('ser.values')
    values() {
      return of(1, 2, 3);
    }

    @EventPattern('ser.event', { maxAttempts: 1 })
    event(@Payload() data: unknown) {
      bodies.push(data);
    }
  }

  @Module({ controllers: [Doubler] })
  class DoublerModule {}

  @Controller()
  class PlainValues {
    @MessagePattern({ cmd: 'plain.values' })
    values() {
      return of(1, 2);
    }
  }

  @Module({ controllers: [PlainValues] })
  class PlainModule {}

  let server: RedisAckQueueServer;
  let client: RedisAckQueueClient;

  beforeAll(async () => {
    const plain = await NestFactory.createMicroservice(PlainModule, {
      strategy: new RedisAckQueueServer({ connection: fx.connection }),
      logger: false,
    });
    await plain.listen();
    fx.closers.push(() => plain.close());
    server = new RedisAckQueueServer({
      connection: fx.connection,
      deserializer: {
        deserialize: (
          value: { wrapped: unknown; meta?: Record<string, string> },
          options?: Record<string, unknown>,
        ) => {
          if (value.wrapped === 'poison') throw new TypeError('cannot read it');
          return { pattern: options?.channel, data: value.wrapped, metadata: value.meta };
        },
      },
      serializer: {
        serialize: (packet: { response?: unknown }) =>
          packet.response === undefined ? packet : { ...packet, response: { boxed: packet.response } },
      },
    });
    const app = await NestFactory.createMicroservice(DoublerModule, { strategy: server, logger: false });
    await app.listen();
    client = new RedisAckQueueClient({
      connection: fx.connection,
      serializer: {
        serialize: (packet: { pattern: unknown; data: unknown; metadata?: unknown }) => ({
          wrapped: packet.data,
          meta: packet.metadata,
        }),
      },
      deserializer: {
        deserialize: (packet: { response?: { boxed: unknown } }) => ({ ...packet, response: packet.response?.boxed }),
      },
    });
    fx.closers.push(
      () => app.close(),
      () => client.close(),
    );
  });

  it("applies the client's serializer to the outgoing packet, and the server's deserializer to the body", async () => {
    const { id } = await lastValueFrom(
      client.emit<{ id: string }>('ser.parked', new RedisAckQueueRecord({ n: 1 }, { delayMs: 60_000 })),
    );
    // What is stored is what the serializer made of the packet.
    expect((await server.unwrap().get('ser.parked', id))?.payload).toEqual({ wrapped: { n: 1 } });
    await server.unwrap().cancel('ser.parked', id);
    await lastValueFrom(client.emit('ser.event', { n: 2 }));
    await eventually(() => bodies.length === 1);
    expect(bodies).toEqual([{ n: 2 }]);
  });

  it("applies the server's serializer to each response packet, and the client's deserializer to each", async () => {
    expect(await firstValueFrom(client.send('ser.double', 21))).toEqual({ doubled: 42, metadata: null });
    expect(await lastValueFrom(client.send('ser.values', {}).pipe(toArray()))).toEqual([1, 2, 3]);
  });

  (nest12 ? it : it.skip)('gives the serializer the metadata, and the context what the deserializer read', async () => {
    client.setOnDispatchHook((packet) => {
      packet.metadata = { via: 'serializer' };
    });
    expect(await firstValueFrom(client.send('ser.double', 1))).toEqual({
      doubled: 2,
      metadata: { via: 'serializer' },
    });
    client.setOnDispatchHook(() => undefined);
  });

  it("reads a serializing server's replies with Nest's own deserializer when the client has none", async () => {
    const plain = new RedisAckQueueClient({ connection: fx.connection });
    fx.closers.push(() => plain.close());
    const reply = await firstValueFrom(
      plain.send<unknown>('ser.double', new RedisAckQueueRecord({ wrapped: 4 }, { timeoutMs: 10_000 })),
    );
    expect(reply).toEqual({ boxed: { doubled: 8, metadata: null } });
  });

  it("gives a client's deserializer the response packets of a server without a serializer", async () => {
    const reading = new RedisAckQueueClient({
      connection: fx.connection,
      deserializer: {
        deserialize: (packet: { response?: unknown; err?: unknown }) => ({
          ...packet,
          response: packet.err === undefined ? { read: packet.response } : undefined,
        }),
      },
    });
    fx.closers.push(() => reading.close());
    expect(await lastValueFrom(reading.send<unknown>({ cmd: 'plain.values' }, {}).pipe(toArray()))).toEqual([
      { read: 1 },
      { read: 2 },
    ]);
  });

  it('refuses at once a body its deserializer throws on (dead-lettered as rejected)', async () => {
    const { id } = await lastValueFrom(client.emit<{ id: string }>('ser.event', 'poison'));
    const letter = await eventually(async () =>
      (await server.unwrap().deadLetters('ser.event')).find((each) => each.id === id),
    );
    expect(letter).toMatchObject({ reason: 'rejected', attempt: 1 });
    expect(letter?.error).toContain("the server's deserializer threw a TypeError");
  });
});
