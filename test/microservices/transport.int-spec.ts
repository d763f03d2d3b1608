import {
  type ArgumentsHost,
  Catch,
  type CallHandler,
  type CanActivate,
  Controller,
  type ExceptionFilter,
  type ExecutionContext,
  Injectable,
  type INestMicroservice,
  Module,
  type NestInterceptor,
  ParseIntPipe,
  type PipeTransform,
  UseFilters,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import {
  finalize,
  firstValueFrom,
  interval,
  lastValueFrom,
  map,
  type Observable,
  take,
  throwError,
  timer,
  toArray,
} from 'rxjs';
import { InvalidOptionError, RedisAckQueueError, RequestTimeoutError, type RedisAckQueueService } from '../../lib';
import {
  RedisAckQueueClient,
  RedisAckQueueContext,
  RedisAckQueueRecord,
  RedisAckQueueRejectException,
  RedisAckQueueServer,
  REPLY_TO_HEADER,
  REPLY_TTL_HEADER,
  topicOfPattern,
} from '../../lib/microservices';
import { deferred } from '../support/async-helpers';
import { expectLogs } from '../support/capture-logs';
import { eventually, useRedis } from '../support/queue-fixture';

/** What the handlers saw, by pattern. */
const seen = new Map<string, unknown[]>();
const record = (pattern: string, value: unknown) => seen.set(pattern, [...(seen.get(pattern) ?? []), value]);
const calls = (pattern: string) => seen.get(pattern) ?? [];
let gate = deferred();
let intercepted = 0;

class DenyGuard implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

class RefusingPipe implements PipeTransform {
  transform(value: { ok?: boolean }) {
    if (!value.ok) throw new RedisAckQueueRejectException('the order has no items');
    return value;
  }
}

@Injectable()
class CountingInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    intercepted++;
    return next.handle().pipe(map((value: unknown) => (typeof value === 'number' ? value * 10 : value)));
  }
}

class QuotaError extends Error {}

@Catch(QuotaError)
class QuotaFilter implements ExceptionFilter {
  catch(_error: QuotaError, _host: ArgumentsHost): Observable<never> {
    return throwError(() => ({ status: 'error', message: 'over quota', filtered: true }));
  }
}

@Controller()
class EventHandlers {
  @EventPattern<string>('orders.created')
  async created(@Payload() data: { n: number; hold?: boolean }, @Ctx() context: RedisAckQueueContext) {
    record('orders.created', {
      n: data.n,
      attempt: context.attempt,
      topic: context.topic,
      pattern: context.getPattern(),
      tenant: context.headers['x-tenant'],
    });
    if (data.hold) await gate.promise;
  }

  @EventPattern('orders.flaky', { maxAttempts: 2 })
  flaky(@Payload() data: { n: number }) {
    record('orders.flaky', data.n);
    throw new Error('the warehouse is down');
  }

  @EventPattern('orders.rpc-failing', { maxAttempts: 2 })
  rpcFailing(@Payload() _data: unknown) {
    record('orders.rpc-failing', 1);
    throw new RpcException('stock unknown');
  }

  @EventPattern('orders.guarded')
  @UseGuards(DenyGuard)
  guarded(@Payload() _data: unknown) {
    record('orders.guarded', 1);
  }

  @EventPattern('orders.validated')
  validated(@Payload(new RefusingPipe()) data: { ok: boolean }) {
    record('orders.validated', data);
  }

  @EventPattern('orders.counted')
  counted(
    @Payload(new ParseIntPipe({ exceptionFactory: (text) => new RedisAckQueueRejectException(text) })) n: number,
  ) {
    record('orders.counted', n);
  }

  @EventPattern('orders.observed')
  observed(@Payload() data: { n: number }): Observable<number> {
    return timer(50).pipe(map(() => (record('orders.observed', data.n), data.n)));
  }

  @EventPattern('orders.intercepted')
  @UseInterceptors(CountingInterceptor)
  interceptedEvent(@Payload() _data: unknown) {
    record('orders.intercepted', 1);
  }
}

@Controller()
class RequestHandlers {
  @MessagePattern({ cmd: 'sum' })
  sum(@Payload() numbers: number[]): number {
    record('sum', numbers);
    return numbers.reduce((a, b) => a + b, 0);
  }

  @MessagePattern('math.stream')
  stream(@Payload() data: { upTo: number }): Observable<number> {
    return interval(5).pipe(
      take(data.upTo),
      map((i) => i + 1),
    );
  }

  @MessagePattern('math.failing')
  failing() {
    record('math.failing', 1);
    throw new Error('database password is hunter2');
  }

  @MessagePattern('math.rpc-failing')
  rpcFailing() {
    throw new RpcException({ code: 'E_STOCK', message: 'out of stock' });
  }

  @MessagePattern('math.quota')
  @UseFilters(QuotaFilter)
  quota() {
    throw new QuotaError('quota');
  }

  @MessagePattern('math.denied')
  @UseGuards(DenyGuard)
  denied() {
    record('math.denied', 1);
    return 'never';
  }

  @MessagePattern('math.intercepted')
  @UseInterceptors(CountingInterceptor)
  interceptedRequest(): number {
    return 4;
  }

  @MessagePattern('math.slow')
  async slow(@Ctx() context: RedisAckQueueContext) {
    record('math.slow', context.id);
    await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
    record('math.slow.aborted', context.id);
    return 'late';
  }

  @MessagePattern('math.endless')
  endless(): Observable<number> {
    return interval(10).pipe(finalize(() => record('math.endless', 'unsubscribed')));
  }

  @MessagePattern('math.unsendable')
  unsendable() {
    const reply: Record<string, unknown> = { secretField: 1 };
    reply.self = reply;
    return reply;
  }

  @MessagePattern('math.nothing')
  nothing(): undefined {
    return undefined;
  }

  @MessagePattern('math.context')
  context(@Payload() _data: unknown, @Ctx() context: RedisAckQueueContext) {
    return { id: context.id, attempt: context.attempt, topic: context.getTopic(), tenant: context.headers['x-tenant'] };
  }
}

@Module({ controllers: [EventHandlers, RequestHandlers] })
class AppModule {}

describe('the microservice transport (RedisAckQueueServer, RedisAckQueueClient)', () => {
  const fx = useRedis();
  let app: INestMicroservice;
  let server: RedisAckQueueServer;
  let client: RedisAckQueueClient;
  let queue: RedisAckQueueService;

  beforeAll(async () => {
    server = new RedisAckQueueServer({
      connection: fx.connection,
      leaseMs: 2_000,
      concurrency: 4,
      backoff: { type: 'fixed', delayMs: 20 },
    });
    app = await NestFactory.createMicroservice(AppModule, { strategy: server, logger: false });
    await app.listen();
    client = new RedisAckQueueClient({ connection: fx.connection, timeoutMs: 20_000 });
    fx.closers.push(
      () => app.close(),
      () => client.close(),
    );
    queue = server.unwrap();
  });

  const emit = (pattern: string, data: unknown) =>
    lastValueFrom(client.emit<{ id: string; duplicate: boolean }>(pattern, data));
  const deadOf = async (topic: string, id: string) =>
    eventually(async () => (await queue.deadLetters(topic)).find((letter) => letter.id === id));

  describe('events', () => {
    it('are handled once, with the context, and acked only when the handler resolves', async () => {
      gate = deferred();
      const { id } = await emit(
        'orders.created',
        new RedisAckQueueRecord({ n: 1, hold: true }, { headers: { 'x-tenant': 'acme' } }),
      );
      await eventually(() => calls('orders.created').length === 1);
      expect(calls('orders.created')).toEqual([
        { n: 1, attempt: 1, topic: 'orders.created', pattern: 'orders.created', tenant: 'acme' },
      ]);
      // Running: still leased in Redis.
      expect((await queue.get('orders.created', id))?.state).toBe('leased');
      gate.resolve();
      await queue.waitUntilIdle('orders.created');
      expect(await queue.get('orders.created', id)).toBeNull();
    });

    it('completes emit once stored, with the push result, and deduplicates by id while the message lives', async () => {
      // Delayed, so that it is still there when the second emit comes (an acked message's id is free again).
      const first = await emit('orders.created', new RedisAckQueueRecord({ n: 2 }, { id: 'order-2', delayMs: 60_000 }));
      const second = await emit('orders.created', new RedisAckQueueRecord({ n: 2 }, { id: 'order-2' }));
      expect(first).toEqual({ id: 'order-2', duplicate: false });
      expect(second).toEqual({ id: 'order-2', duplicate: true });
      expect(await queue.stats('orders.created')).toMatchObject({ ready: 0, delayed: 1 });
      await queue.cancel('orders.created', 'order-2');
    });

    it('retries a failed handler with backoff (the pattern extras set maxAttempts), then dead-letters it', async () => {
      const { id } = await emit('orders.flaky', { n: 3 });
      const letter = await deadOf('orders.flaky', id);
      expect(letter).toMatchObject({ reason: 'failed', attempt: 2 });
      // Nest's filter hid an error that is not an RpcException; the dead letter says where it went.
      expect(letter?.error).toContain('Internal server error');
      expect(letter?.error).not.toContain('warehouse');
      expect(calls('orders.flaky')).toEqual([3, 3]);
    });

    it('retries an RpcException too, and keeps its text in the dead letter', async () => {
      const { id } = await emit('orders.rpc-failing', {});
      const letter = await deadOf('orders.rpc-failing', id);
      expect(letter).toMatchObject({ reason: 'failed', attempt: 2 });
      expect(letter?.error).toContain('stock unknown');
    });

    it('dead-letters at once, as rejected, a message a guard denies', async () => {
      const { id } = await emit('orders.guarded', {});
      const letter = await deadOf('orders.guarded', id);
      expect(letter).toMatchObject({ reason: 'rejected', attempt: 1 });
      expect(letter?.error).toContain('guard');
      expect(calls('orders.guarded')).toEqual([]);
    });

    it('dead-letters at once, as rejected, a payload a pipe refuses with RedisAckQueueRejectException', async () => {
      const { id } = await emit('orders.validated', { ok: false });
      const letter = await deadOf('orders.validated', id);
      expect(letter).toMatchObject({ reason: 'rejected', attempt: 1 });
      expect(letter?.error).toContain('the order has no items');
      await emit('orders.validated', { ok: true });
      await eventually(() => calls('orders.validated').length === 1);
      expect(calls('orders.validated')).toEqual([{ ok: true }]);
    });

    it('dead-letters at once a payload a built-in pipe refuses, given the documented exceptionFactory', async () => {
      const { id } = await emit('orders.counted', 'twelve');
      const letter = await deadOf('orders.counted', id);
      expect(letter).toMatchObject({ reason: 'rejected', attempt: 1 });
      expect(letter?.error).toContain('numeric string is expected');
      await emit('orders.counted', '12');
      await eventually(() => calls('orders.counted').length === 1);
      expect(calls('orders.counted')).toEqual([12]);
    });

    it('acks an Observable handler when it completes', async () => {
      const { id } = await emit('orders.observed', { n: 5 });
      await queue.waitUntilIdle('orders.observed');
      expect(calls('orders.observed')).toEqual([5]);
      expect(await queue.get('orders.observed', id)).toBeNull();
    });

    it('runs interceptors', async () => {
      const before = intercepted;
      await emit('orders.intercepted', {});
      await queue.waitUntilIdle('orders.intercepted');
      expect(intercepted).toBe(before + 1);
      expect(calls('orders.intercepted')).toEqual([1]);
    });

    it('sends data as Nest transports do: undefined fields dropped, Dates as text', async () => {
      const at = new Date('2026-01-02T03:04:05.000Z');
      const data = { n: 9, customer: undefined, at };
      const { id } = await emit('orders.created', new RedisAckQueueRecord(data, { delayMs: 60_000 }));
      expect((await queue.get('orders.created', id))?.payload).toEqual({ n: 9, at: '2026-01-02T03:04:05.000Z' });
      await queue.cancel('orders.created', id);
    });

    it('refuses bad input with typed errors and stores nothing', async () => {
      await expect(emit('orders.created', { big: 10n })).rejects.toBeInstanceOf(RedisAckQueueError);
      await expect(emit('orders.created', new RedisAckQueueRecord({}, { priority: 42 }))).rejects.toBeInstanceOf(
        InvalidOptionError,
      );
      expect(await queue.stats('orders.created')).toMatchObject({ ready: 0, delayed: 0 });
    });
  });

  describe('requests', () => {
    it('answer send() from an object pattern, mapped to a documented topic', async () => {
      expect(await firstValueFrom(client.send<number>({ cmd: 'sum' }, [1, 2, 3]))).toBe(6);
      const topic = topicOfPattern({ cmd: 'sum' });
      expect(topic).toMatch(/^pattern\.cmd_sum\.[0-9a-f]{16}$/);
      // An ordinary topic: waitUntilIdle sees it (the reply is stored before the ack).
      await queue.waitUntilIdle(topic);
      expect(await queue.stats(topic)).toMatchObject({ ready: 0, leased: 0 });
    });

    it("stream an Observable handler's values in order, then complete", async () => {
      expect(await lastValueFrom(client.send<number>('math.stream', { upTo: 5 }).pipe(toArray()))).toEqual([
        1, 2, 3, 4, 5,
      ]);
    });

    it('answer a reply JSON cannot hold with an error that says why, without its content', async () => {
      expectLogs(/cannot be sent/);
      const error = (await firstValueFrom(client.send<unknown>('math.unsendable', {})).catch((e: unknown) => e)) as {
        message: string;
      };
      expect(error.message).toMatch(
        /reply to a request of "math.unsendable" cannot be sent.*it is not JSON-serializable/,
      );
      expect(error.message).not.toContain('secretField');
    });

    it('answer undefined as a value', async () => {
      expect(await lastValueFrom(client.send('math.nothing', {}).pipe(toArray()))).toEqual([undefined]);
    });

    it('give the handler its context and the call its message options', async () => {
      const reply = await firstValueFrom(
        client.send<{ id: string; attempt: number; topic: string; tenant: string }>(
          'math.context',
          new RedisAckQueueRecord({}, { id: 'request-ctx', headers: { 'x-tenant': 'acme' } }),
        ),
      );
      expect(reply).toEqual({ id: 'request-ctx', attempt: 1, topic: 'math.context', tenant: 'acme' });
    });

    it("reach the caller with the handler's error as Nest serializes it, and are not retried", async () => {
      await expect(firstValueFrom(client.send('math.failing', {}))).rejects.toEqual({
        status: 'error',
        message: 'Internal server error',
      });
      await expect(firstValueFrom(client.send('math.rpc-failing', {}))).rejects.toEqual({
        code: 'E_STOCK',
        message: 'out of stock',
      });
      await queue.waitUntilIdle('math.failing');
      expect(calls('math.failing')).toEqual([1]);
      expect(await queue.deadLetters('math.failing')).toEqual([]);
    });

    it('apply exception filters and interceptors', async () => {
      await expect(firstValueFrom(client.send('math.quota', {}))).rejects.toEqual({
        status: 'error',
        message: 'over quota',
        filtered: true,
      });
      expect(await firstValueFrom(client.send('math.intercepted', {}))).toBe(40);
    });

    it("answer a guard's denial with Nest's error and dead-letter the request as rejected", async () => {
      await expect(
        firstValueFrom(client.send('math.denied', new RedisAckQueueRecord({}, { id: 'denied-1' }))),
      ).rejects.toEqual({ status: 'error', message: 'Forbidden resource' });
      expect(await deadOf('math.denied', 'denied-1')).toMatchObject({ reason: 'rejected', attempt: 1 });
      expect(calls('math.denied')).toEqual([]);
    });

    // These two time out a request whose handler runs: a bound the server starts it well within, even
    // on a loaded machine (a request that times out before it starts is cancelled unrun instead).
    const RUNNING_TIMEOUT_MS = 3_000;

    it('time out with a typed error, and cancel the request', async () => {
      const error = await firstValueFrom(
        client.send<unknown>('math.slow', new RedisAckQueueRecord({}, { id: 'slow-1', timeoutMs: RUNNING_TIMEOUT_MS })),
      ).catch((e: unknown) => e as Error);
      expect(calls('math.slow')).toContain('slow-1');
      expect(error).toBeInstanceOf(RequestTimeoutError);
      expect(error).toMatchObject({ code: 'REQUEST_TIMEOUT', topic: 'math.slow', timeoutMs: RUNNING_TIMEOUT_MS });
      // The running handler hears it through its signal; nothing is answered or left behind.
      await eventually(() => calls('math.slow.aborted').includes('slow-1'));
      await queue.waitUntilIdle('math.slow');
      expect(await queue.stats('math.slow')).toMatchObject({ ready: 0, leased: 0, delayed: 0 });
    });

    it('unsubscribe an endless Observable handler when its caller times out', async () => {
      const error = await firstValueFrom(
        client.send<unknown>('math.endless', new RedisAckQueueRecord({}, { timeoutMs: RUNNING_TIMEOUT_MS })),
      ).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(RequestTimeoutError);
      await eventually(() => calls('math.endless').length === 1);
      await queue.waitUntilIdle('math.endless');
    });

    it('time out a request that no server consumes, and leave nothing behind', async () => {
      const error = await firstValueFrom(
        client.send<unknown>('nobody.listens', new RedisAckQueueRecord({}, { timeoutMs: 100 })),
      ).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(RequestTimeoutError);
      await eventually(async () => (await queue.stats('nobody.listens')).ready === 0);
    });

    it('refuse a bad timeout with a typed error', async () => {
      await expect(
        firstValueFrom(client.send('math.context', new RedisAckQueueRecord({}, { timeoutMs: 0 }))),
      ).rejects.toBeInstanceOf(InvalidOptionError);
    });

    it('keep a reply nobody reads only for its TTL', async () => {
      // A caller that is gone: its request names a channel of this prefix that nobody listens to.
      const channel = `ackq:reply-to:${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`;
      const { id } = await queue.push(topicOfPattern({ cmd: 'sum' }), [2, 2], {
        headers: { [REPLY_TO_HEADER]: channel, [REPLY_TTL_HEADER]: '1000' },
      });
      await queue.waitUntilIdle(topicOfPattern({ cmd: 'sum' }));
      // The reply's key (docs/architecture.md), in the topic's slot.
      const key = `{ackq:${topicOfPattern({ cmd: 'sum' })}}:reply:${id}`;
      const ttl = await fx.redis.pttl(key);
      // At least a minute (two leases at most), plus 5 s, whatever the caller asked.
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(65_000);
    });

    it('reach the caller whole on its inline channel, and leave the mark of a taken reply in Redis', async () => {
      const topic = topicOfPattern({ cmd: 'sum' });
      const listener = fx.client();
      const notice = new Promise<string>((resolve) =>
        listener.on('pmessage', (_pattern, _from, text: string) => resolve(text)),
      );
      await listener.psubscribe('ackq:reply-to:*:inline');
      try {
        const record = new RedisAckQueueRecord([3, 4], { id: 'whole-1' });
        expect(await firstValueFrom(client.send({ cmd: 'sum' }, record))).toBe(7);
        expect(await notice).toBe('{"v":[7]}\nwhole-1');
        // The caller heard the reply itself and marks it taken: a redelivery would find it answered.
        await eventually(async () => (await fx.redis.get(`{ackq:${topic}}:reply:whole-1`)) === '-');
      } finally {
        listener.disconnect();
      }
    });

    it('answer a caller older than whole replies with the id on its channel, and keep the reply for it to take', async () => {
      const topic = topicOfPattern({ cmd: 'sum' });
      const channel = `ackq:reply-to:${'1'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`;
      const listener = fx.client();
      const notice = new Promise<string>((resolve) => listener.on('message', (_from, text: string) => resolve(text)));
      await listener.subscribe(channel);
      try {
        // Its headers name its channel and its wait, and do not ask for the reply whole.
        const { id } = await queue.push(topic, [2, 5], {
          headers: { [REPLY_TO_HEADER]: channel, [REPLY_TTL_HEADER]: '10000' },
        });
        expect(await notice).toBe(id);
        expect(await fx.redis.get(`{ackq:${topic}}:reply:${id}`)).toBe('{"v":[7]}');
      } finally {
        listener.disconnect();
      }
    });

    it('list their topics in the registry, as every topic', async () => {
      expect(await queue.topics()).toEqual(
        expect.arrayContaining(['orders.created', 'math.stream', topicOfPattern({ cmd: 'sum' })]),
      );
    });

    it('answer many concurrent callers, each with its own reply', async () => {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, n) => firstValueFrom(client.send<number>({ cmd: 'sum' }, [n, 1]))),
      );
      expect(replies).toEqual(Array.from({ length: 50 }, (_, n) => n + 1));
    });
  });
});
