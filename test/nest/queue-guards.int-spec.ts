import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  type INestApplicationContext,
  Module,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import {
  MessageRejectedError,
  QueueGuardError,
  QueueHandler,
  REDIS_ACK_QUEUE_CONTEXT_TYPE,
  RedisAckQueueModule,
  RedisAckQueueService,
  type RedisAckQueueEvent,
} from '../../lib';
import { expectLogs, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const T = {
  http: uniqueTopic('guard.http'),
  checked: uniqueTopic('guard.checked'),
  denied: uniqueTopic('guard.denied'),
};
const handled: Record<string, unknown[]> = {};

/** An HTTP auth guard, applied app-wide, that does not expect queue messages. */
@Injectable()
class JwtAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers.authorization === 'Bearer valid';
  }
}

/** The same guard with the check the error suggests: it lets queue messages through. */
@Injectable()
class CheckedAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return request.headers.authorization === 'Bearer valid';
  }
}

/** An HTTP guard that reads the request defensively: it returns false on a queue message. */
@Injectable()
class SessionGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return Boolean(context.switchToHttp().getRequest<{ session?: unknown }>().session);
  }
}

@Injectable()
class Handlers {
  @QueueHandler(T.http, { maxAttempts: 3 })
  http(payload: unknown) {
    (handled[T.http] ??= []).push(payload);
  }
  @QueueHandler(T.checked)
  checked(payload: unknown) {
    (handled[T.checked] ??= []).push(payload);
  }
  @QueueHandler(T.denied, { maxAttempts: 3 })
  denied(payload: unknown) {
    (handled[T.denied] ??= []).push(payload);
  }
}

// Each test's app consumes every topic of Handlers: it is closed before the next starts.
let app: INestApplicationContext | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});
const fx = useRedis();
expectLogs(/went to the dead letters as rejected/);

async function appWith(guard: new (...args: never[]) => CanActivate): Promise<RedisAckQueueService> {
  @Module({
    imports: [RedisAckQueueModule.forRoot({ connection: fx.connection, drainMs: 500 })],
    providers: [Handlers, { provide: APP_GUARD, useClass: guard }],
  })
  class App {}
  app = await NestFactory.createApplicationContext(App, { logger: testLogger() });
  return app.get(RedisAckQueueService);
}

const deadEvent = (queue: RedisAckQueueService, topic: string) =>
  firstValueFrom(
    queue.events$.pipe(filter((event: RedisAckQueueEvent) => event.topic === topic && event.type === 'dead')),
  );

describe('an app-wide guard on a queue message', () => {
  it('that throws: the message is rejected at once, and its error names the guard and the context type', async () => {
    const queue = await appWith(JwtAuthGuard);
    const dead = deadEvent(queue, T.http);
    const { id } = await queue.push(T.http, { orderId: 'o-1' });
    const event = await dead;
    expect(event).toMatchObject({ id, reason: 'rejected', attempt: 1 });
    const error = event.error as QueueGuardError;
    expect(error).toBeInstanceOf(QueueGuardError);
    expect(error).toBeInstanceOf(MessageRejectedError);
    expect(error).toMatchObject({ code: 'MESSAGE_REJECTED', guard: 'JwtAuthGuard', contextType: 'redis-ack-queue' });
    expect(error.contextType).toBe(REDIS_ACK_QUEUE_CONTEXT_TYPE);
    expect(error.cause).toBeInstanceOf(TypeError);
    const text =
      'Message rejected, dead-lettered without a retry: the guard JwtAuthGuard threw on a queue message, where ' +
      "context.getType() returns 'redis-ack-queue' (TypeError: Cannot read properties of undefined (reading " +
      "'authorization')): guards written for HTTP should return true (or skip) when context.getType() !== 'http'";
    expect(error.message).toBe(text);
    const info = await queue.get(T.http, id);
    expect(info).toMatchObject({ state: 'dead', reason: 'rejected', attempt: 1 });
    expect(info!.error!.split('\n')[0]).toBe(`QueueGuardError: ${text}`);
    expect(handled[T.http]).toBeUndefined();
  });

  it('that returns true outside HTTP (the suggested check): the message is handled', async () => {
    const queue = await appWith(CheckedAuthGuard);
    await queue.push(T.checked, 'through');
    await eventually(() => handled[T.checked]?.length === 1);
    expect(handled[T.checked]).toEqual(['through']);
  });

  it('that returns false: rejected at once as before, and the error names the guard and the context type', async () => {
    const queue = await appWith(SessionGuard);
    const dead = deadEvent(queue, T.denied);
    const { id } = await queue.push(T.denied, 'denied');
    const event = await dead;
    expect(event).toMatchObject({ id, reason: 'rejected', attempt: 1 });
    expect(event.error).toBeInstanceOf(MessageRejectedError);
    expect(event.error).not.toBeInstanceOf(QueueGuardError);
    const info = await queue.get(T.denied, id);
    expect(info!.error!.split('\n')[0]).toBe(
      'MessageRejectedError: Message rejected, dead-lettered without a retry: a guard denied it (Forbidden resource): ' +
        "SessionGuard returned false on a queue message, where context.getType() returns 'redis-ack-queue'; if it " +
        "was written for HTTP, have it return true when context.getType() !== 'http'",
    );
    expect(handled[T.denied]).toBeUndefined();
  });
});
