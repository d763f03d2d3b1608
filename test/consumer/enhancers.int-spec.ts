import {
  type ArgumentsHost,
  type CallHandler,
  type CanActivate,
  Catch,
  type ExceptionFilter,
  type ExecutionContext,
  ForbiddenException,
  Injectable,
  Module,
  type NestInterceptor,
  Scope,
  type PipeTransform,
  type ArgumentMetadata,
  SetMetadata,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
  ValidationPipe,
  type INestApplicationContext,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE, NestFactory, Reflector } from '@nestjs/core';
import { IsInt, IsString, Min } from 'class-validator';
import { Observable, of, throwError } from 'rxjs';
import { concatWith, tap } from 'rxjs/operators';
import { type MessageContext, QueueHandler, RedisAckQueueModule, RedisAckQueueService } from '../../lib';
import { expectLogs, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const T = {
  validated: uniqueTopic('enh.validated'),
  guarded: uniqueTopic('enh.guarded'),
  intercepted: uniqueTopic('enh.intercepted'),
  filtered: uniqueTopic('enh.filtered'),
  observed: uniqueTopic('enh.observed'),
  global: uniqueTopic('enh.global'),
  scoped: uniqueTopic('enh.scoped'),
};
const seen: Record<string, unknown[]> = {};
const record = (key: string, value: unknown) => (seen[key] ??= []).push(value);

class OrderDto {
  @IsString() orderId!: string;
  @IsInt() @Min(1) quantity!: number;
}

@Injectable()
class RoleGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    const rpc = context.switchToRpc();
    const wanted = this.reflector.get<string>('role', context.getHandler());
    record('guard', {
      type: context.getType(),
      data: rpc.getData<unknown>(),
      context: rpc.getContext<MessageContext>(),
      handler: context.getHandler(),
      class: context.getClass(),
      wanted,
    });
    return rpc.getData<{ role?: string }>().role === wanted;
  }
}

@Catch()
class RecordingFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost) {
    record('filter', { exception, type: host.getType(), data: host.switchToRpc().getData<unknown>() });
    // Handled, without rethrowing: the delivery must still fail.
    return { handled: true };
  }
}

@Injectable()
class FailingInterceptor implements NestInterceptor {
  intercept(): Observable<unknown> {
    throw new Error('the interceptor failed');
  }
}

@Injectable()
class TimingInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    record('around', `before ${context.getType()}`);
    return next.handle().pipe(tap({ complete: () => record('around', 'after') }));
  }
}

@Injectable()
class OrderHandlers {
  @UsePipes(new ValidationPipe({ transform: true }))
  @QueueHandler(T.validated, { maxAttempts: 3 })
  place(order: OrderDto, context: MessageContext) {
    record(T.validated, { isDto: order instanceof OrderDto, order: { ...order }, attempt: context.attempt });
  }

  @UseInterceptors(FailingInterceptor)
  @QueueHandler(T.intercepted, { maxAttempts: 3 })
  intercepted(_payload: unknown, context: MessageContext) {
    record(T.intercepted, context.attempt);
  }

  @UseInterceptors(TimingInterceptor)
  @QueueHandler(T.observed, { maxAttempts: 2 })
  observed(payload: { fail?: boolean }, context: MessageContext): Observable<string> {
    record(T.observed, context.attempt);
    const values = of('one', 'two');
    return payload.fail ? values.pipe(concatWith(throwError(() => new Error('the stream failed')))) : values;
  }
}

@UseGuards(RoleGuard)
@UseFilters(RecordingFilter)
@Injectable()
class AdminHandlers {
  @SetMetadata('role', 'admin')
  @QueueHandler(T.guarded, { maxAttempts: 3 })
  admin(payload: unknown, context: MessageContext) {
    record(T.guarded, { payload, attempt: context.attempt });
  }

  @QueueHandler(T.filtered, { maxAttempts: 2 })
  broken(_payload: unknown, context: MessageContext) {
    record(T.filtered, context.attempt);
    throw new Error('the handler broke');
  }
}

let scopedInstances = 0;
@UseGuards(RoleGuard)
@Injectable({ scope: Scope.REQUEST })
class ScopedAdminHandlers {
  readonly serial = ++scopedInstances;

  @SetMetadata('role', 'admin')
  @QueueHandler(T.scoped)
  handle(payload: unknown) {
    record(T.scoped, { payload, serial: this.serial });
  }
}

@Injectable()
class GlobalGuard implements CanActivate {
  canActivate(context: ExecutionContext) {
    record('global guard', context.getType());
    return !context.switchToRpc().getData<{ deny?: boolean }>().deny;
  }
}

@Injectable()
class GlobalPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata) {
    record('global pipe', metadata.type);
    return { ...(value as object), piped: true };
  }
}

@Injectable()
class GlobalInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    record('global interceptor', context.getType());
    return next.handle();
  }
}

@Catch()
class GlobalFilter implements ExceptionFilter {
  catch(exception: unknown) {
    record('global filter', exception instanceof Error ? exception.message : exception);
  }
}

@Injectable()
class PlainHandlers {
  @QueueHandler(T.global, { maxAttempts: 2 })
  handle(payload: { fail?: boolean }, context: MessageContext) {
    record(T.global, { payload, attempt: context.attempt });
    if (payload.fail) throw new Error('the plain handler failed');
  }
}

describe('enhancers on @QueueHandler methods (guards, interceptors, pipes, filters), as for microservices', () => {
  let app: INestApplicationContext;
  let globalApp: INestApplicationContext;
  let queue: RedisAckQueueService;
  // Declared before useRedis: Jest runs afterAll hooks in order, and the apps must close before
  // the server stops (else their schedulers retry a gone server for seconds).
  afterAll(async () => {
    await app?.close();
    await globalApp?.close();
  });
  const fx = useRedis();
  const options = () => ({ connection: fx.connection, backoff: { type: 'fixed' as const, delayMs: 10 } });
  expectLogs(/failed on attempt/, /went to the dead letters as/);

  beforeAll(async () => {
    @Module({
      imports: [RedisAckQueueModule.forRoot(options())],
      providers: [OrderHandlers, AdminHandlers, ScopedAdminHandlers, RoleGuard],
    })
    class LocalApp {}
    @Module({
      imports: [RedisAckQueueModule.forRoot(options())],
      providers: [
        PlainHandlers,
        { provide: APP_GUARD, useClass: GlobalGuard },
        { provide: APP_PIPE, useClass: GlobalPipe },
        { provide: APP_INTERCEPTOR, useClass: GlobalInterceptor },
        { provide: APP_FILTER, useClass: GlobalFilter },
      ],
    })
    class GlobalApp {}
    app = await NestFactory.createApplicationContext(LocalApp, { logger: testLogger() });
    globalApp = await NestFactory.createApplicationContext(GlobalApp, { logger: testLogger() });
    queue = app.get(RedisAckQueueService);
  });

  it('a ValidationPipe passes a valid payload to the handler as its DTO', async () => {
    await queue.push(T.validated, { orderId: 'o-1', quantity: 2 });
    await queue.waitUntilIdle(T.validated);
    expect(seen[T.validated]).toEqual([{ isDto: true, order: { orderId: 'o-1', quantity: 2 }, attempt: 1 }]);
    expect(await queue.stats(T.validated)).toMatchObject({ dead: 0 });
  });

  it('a ValidationPipe refusing the payload dead-letters it after one attempt as rejected, with its findings', async () => {
    const before = seen[T.validated]?.length ?? 0;
    const { id } = await queue.push(T.validated, { orderId: 42, quantity: 0 });
    await queue.waitUntilIdle(T.validated);
    expect(seen[T.validated]?.length ?? 0).toBe(before);
    const [letter] = await queue.deadLetters(T.validated);
    expect(letter).toMatchObject({ id, reason: 'rejected', attempt: 1 });
    expect(letter.error).toMatch(
      /^MessageRejectedError: Message rejected, dead-lettered without a retry: a pipe refused its payload \(Bad Request Exception: orderId must be a string; quantity must not be less than 1\)/,
    );
  });

  it('a guard sees the ExecutionContext: type redis-ack-queue, the payload as RPC data, the MessageContext', async () => {
    const { id } = await queue.push(T.guarded, { role: 'admin' });
    await queue.waitUntilIdle(T.guarded);
    expect(seen[T.guarded]).toEqual([{ payload: { role: 'admin' }, attempt: 1 }]);
    const [call] = seen.guard as Record<string, unknown>[];
    // getHandler() is the method itself (compared, not called).
    expect(call).toMatchObject({
      type: 'redis-ack-queue',
      data: { role: 'admin' },
      // eslint-disable-next-line @typescript-eslint/unbound-method -- compared, never called
      handler: AdminHandlers.prototype.admin,
      class: AdminHandlers,
      wanted: 'admin',
    });
    expect(call.context).toMatchObject({ id, topic: T.guarded, attempt: 1, maxAttempts: 3 });
    expect(typeof (call.context as MessageContext).extendLease).toBe('function');
  });

  it('a guard that denies dead-letters the message at once as rejected; the class filter saw the ForbiddenException', async () => {
    const handled = seen[T.guarded]?.length ?? 0;
    const { id } = await queue.push(T.guarded, { role: 'guest' });
    await queue.waitUntilIdle(T.guarded);
    expect(seen[T.guarded]?.length ?? 0).toBe(handled);
    const [letter] = await queue.deadLetters(T.guarded);
    expect(letter).toMatchObject({ id, reason: 'rejected', attempt: 1 });
    expect(letter.error).toMatch(/a guard denied it \(Forbidden resource\)/);
    const filtered = (seen.filter as { exception: unknown; type: string; data: unknown }[]).find(
      (f) => f.exception instanceof ForbiddenException,
    );
    expect(filtered).toMatchObject({ type: 'redis-ack-queue', data: { role: 'guest' } });
  });

  it('an interceptor that throws fails the delivery as usual: retried, then dead as failed', async () => {
    const { id } = await queue.push(T.intercepted, 'x');
    await eventually(async () => (await queue.stats(T.intercepted)).dead === 1);
    const [letter] = await queue.deadLetters(T.intercepted);
    expect(letter).toMatchObject({ id, reason: 'failed', attempt: 3 });
    expect(letter.error).toMatch(/^Error: the interceptor failed/);
    expect(seen[T.intercepted]).toBeUndefined();
  });

  it('a filter that handles the error without rethrowing does not ack: the delivery fails with the original error', async () => {
    const { id } = await queue.push(T.filtered, { n: 1 });
    await eventually(async () => (await queue.stats(T.filtered)).dead === 1);
    expect(seen[T.filtered]).toEqual([1, 2]);
    const caught = (seen.filter as { exception: Error; type: string; data: unknown }[]).filter(
      (f) => f.exception.message === 'the handler broke',
    );
    expect(caught.map((f) => [f.type, f.data])).toEqual([
      ['redis-ack-queue', { n: 1 }],
      ['redis-ack-queue', { n: 1 }],
    ]);
    const [letter] = await queue.deadLetters(T.filtered);
    expect(letter).toMatchObject({ id, reason: 'failed', attempt: 2 });
    expect(letter.error).toMatch(/^Error: the handler broke/);
  });

  it('an Observable through interceptors: acked when it completes, failed when it errors', async () => {
    await queue.push(T.observed, { fail: false });
    await queue.waitUntilIdle(T.observed);
    expect(seen.around).toEqual(['before redis-ack-queue', 'after']);
    expect(await queue.stats(T.observed)).toMatchObject({ dead: 0 });
    await queue.push(T.observed, { fail: true });
    await eventually(async () => (await queue.stats(T.observed)).dead === 1);
    const [letter] = await queue.deadLetters(T.observed);
    expect(letter).toMatchObject({ reason: 'failed', attempt: 2 });
    expect(letter.error).toMatch(/^Error: the stream failed/);
  });

  it('runs the enhancers of a request-scoped handler with the instance of each message', async () => {
    await queue.push(T.scoped, { role: 'admin' });
    const { id } = await queue.push(T.scoped, { role: 'guest' });
    await queue.push(T.scoped, { role: 'admin' });
    await queue.waitUntilIdle(T.scoped);
    const handled = seen[T.scoped] as { payload: unknown; serial: number }[];
    expect(handled.map((h) => h.payload)).toEqual([{ role: 'admin' }, { role: 'admin' }]);
    expect(new Set(handled.map((h) => h.serial)).size).toBe(2);
    const letters = await queue.deadLetters(T.scoped);
    expect(letters).toHaveLength(1);
    expect(letters[0]).toMatchObject({ id, reason: 'rejected' });
  });

  it('applies APP_GUARD, APP_PIPE, APP_INTERCEPTOR and APP_FILTER to handlers without enhancers of their own', async () => {
    const plain = globalApp.get(RedisAckQueueService);
    await plain.push(T.global, { n: 1 });
    await plain.waitUntilIdle(T.global);
    expect(seen[T.global]).toEqual([{ payload: { n: 1, piped: true }, attempt: 1 }]);
    expect(seen['global guard']).toEqual(['redis-ack-queue']);
    expect(seen['global interceptor']).toEqual(['redis-ack-queue']);
    expect(seen['global pipe']).toEqual(['body']);
    // Denied by the global guard: rejected at once.
    const denied = await plain.push(T.global, { deny: true });
    // Failing: the global filter sees it, the delivery still fails (2 attempts, then dead).
    const failing = await plain.push(T.global, { fail: true });
    await eventually(async () => (await plain.stats(T.global)).dead === 2);
    const letters = await plain.deadLetters(T.global);
    expect(letters.find((l) => l.id === denied.id)).toMatchObject({ reason: 'rejected', attempt: 1 });
    expect(letters.find((l) => l.id === failing.id)).toMatchObject({ reason: 'failed', attempt: 2 });
    expect(seen['global filter']).toEqual([
      'Forbidden resource',
      'the plain handler failed',
      'the plain handler failed',
    ]);
  });
});
