import {
  Controller,
  type INestMicroservice,
  InternalServerErrorException,
  Module,
  UsePipes,
  ValidationPipe,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { IsInt, IsString, Min } from 'class-validator';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import type { RedisAckQueueService } from '../../lib';
import {
  RedisAckQueueClient,
  RedisAckQueueRefusalFilter,
  RedisAckQueueServer,
  UnknownPatternOptionError,
} from '../../lib/microservices';
import { deferred } from '../support/async-helpers';
import { eventually, useRedis } from '../support/queue-fixture';

class OrderDto {
  @IsString()
  sku!: string;

  @IsInt()
  @Min(1)
  quantity!: number;
}

const handled: string[] = [];
/** Slow handlers: how many started, and what lets them finish. */
let running = 0;
let allRunning = deferred();
let release = deferred();
let expectedRunning = 0;

@Controller()
@UsePipes(new ValidationPipe())
class OrderHandlers {
  @EventPattern('orders.validated')
  placed(@Payload() order: OrderDto) {
    handled.push(`event ${order.sku}`);
  }

  @MessagePattern('orders.quote')
  quote(@Payload() order: OrderDto): number {
    handled.push(`request ${order.sku}`);
    return order.quantity * 10;
  }

  @EventPattern('orders.broken', { maxAttempts: 2 })
  broken(@Payload() _order: OrderDto) {
    handled.push('broken');
    throw new InternalServerErrorException('the warehouse is down');
  }

  @EventPattern('orders.slow')
  async slow(@Payload() _data: unknown) {
    running++;
    if (running === expectedRunning) allRunning.resolve();
    await release.promise;
  }
}

@Module({ controllers: [OrderHandlers] })
class OrdersModule {}

@Controller()
class MisspeltHandlers {
  @EventPattern('orders.misspelt', { maxAttempt: 3 })
  misspelt(@Payload() _data: unknown) {
    handled.push('misspelt');
  }
}

@Module({ controllers: [MisspeltHandlers] })
class MisspeltModule {}

describe('the microservice transport: defaults and refusals', () => {
  const fx = useRedis();
  let app: INestMicroservice;
  let client: RedisAckQueueClient;
  let queue: RedisAckQueueService;

  beforeAll(async () => {
    // No concurrency option: the transport's default applies.
    const server = new RedisAckQueueServer({ connection: fx.connection, backoff: { type: 'fixed', delayMs: 20 } });
    app = await NestFactory.createMicroservice(OrdersModule, { strategy: server, logger: false });
    app.useGlobalFilters(new RedisAckQueueRefusalFilter());
    await app.listen();
    client = new RedisAckQueueClient({ connection: fx.connection, timeoutMs: 20_000 });
    fx.closers.push(
      () => app.close(),
      () => client.close(),
    );
    queue = server.unwrap();
  });

  const deadOf = async (topic: string, id: string) =>
    eventually(async () => (await queue.deadLetters(topic)).find((letter) => letter.id === id));

  it("dead-letters at once, as rejected, an event ValidationPipe refuses, with the pipe's findings", async () => {
    const { id } = await lastValueFrom(
      client.emit<{ id: string }>('orders.validated', { sku: 'A-1', quantity: 0, note: 'secret-note' }),
    );
    const letter = await deadOf('orders.validated', id);
    expect(letter).toMatchObject({ reason: 'rejected', attempt: 1 });
    expect(letter?.error).toContain('quantity must not be less than 1');
    expect(letter?.error).not.toContain('secret-note');
    expect(handled).not.toContain('event A-1');
    // A valid payload runs.
    await lastValueFrom(client.emit('orders.validated', { sku: 'A-2', quantity: 1 }));
    await eventually(() => handled.includes('event A-2'));
  });

  it('answers a request ValidationPipe refuses with its findings at once, and dead-letters it as rejected', async () => {
    const refused = firstValueFrom(client.send('orders.quote', { sku: 7, quantity: 2 }));
    const answer = await refused.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(answer).toEqual({ status: 'error', message: 'Bad Request Exception: sku must be a string' });
    const letter = await eventually(async () => (await queue.deadLetters('orders.quote'))[0]);
    expect(letter).toMatchObject({ reason: 'rejected', attempt: 1 });
    expect(handled.filter((each) => each.startsWith('request'))).toEqual([]);
    await expect(firstValueFrom(client.send('orders.quote', { sku: 'B-1', quantity: 2 }))).resolves.toBe(20);
  });

  it('still retries a server error (5xx) with the filter in place', async () => {
    const { id } = await lastValueFrom(client.emit<{ id: string }>('orders.broken', { sku: 'C-1', quantity: 1 }));
    const letter = await deadOf('orders.broken', id);
    expect(letter).toMatchObject({ reason: 'failed', attempt: 2 });
    expect(handled.filter((each) => each === 'broken')).toHaveLength(2);
  });

  it('runs 50 handlers of a pattern at once by default, as a ported app expects', async () => {
    running = 0;
    expectedRunning = 50;
    allRunning = deferred();
    release = deferred();
    await Promise.all(Array.from({ length: 50 }, () => lastValueFrom(client.emit('orders.slow', {}))));
    // Each handler holds its slot until all 50 run: with fewer slots this never resolves.
    await allRunning.promise;
    release.resolve();
    await queue.waitUntilIdle('orders.slow');
    expect(running).toBe(50);
  });

  it('refuses at startup a pattern extra that is no handler option, naming the one it meant', async () => {
    const server = new RedisAckQueueServer({ connection: fx.connection });
    const misspelt = await NestFactory.createMicroservice(MisspeltModule, { strategy: server, logger: false });
    fx.closers.push(() => misspelt.close());
    const failure = await misspelt.listen().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(UnknownPatternOptionError);
    expect(failure).toMatchObject({
      code: 'UNKNOWN_PATTERN_OPTION',
      topic: 'orders.misspelt',
      option: 'maxAttempt',
      suggestion: 'maxAttempts',
    });
    expect((failure as Error).message).toContain('did you mean "maxAttempts"?');
  });
});
