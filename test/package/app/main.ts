// A new app's first use of the package, built and run by test/package/packed.package-spec.ts twice
// from this one source: as an ES module app on Nest 12 and as a CommonJS app on Nest 11.
// Env: REDIS_URL, PREFIX. Prints one JSON line: the delivery, the queue's counts after it, the format.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type MessageContext, QueueHandler, RedisAckQueueModule, RedisAckQueueService } from 'nestjs-redis-ack-queue';
// The testing entry point resolves (types and code) in an ES module app and in a CommonJS one.
import { createMessageContext } from 'nestjs-redis-ack-queue/testing';

const TOPIC = 'smoke.greetings';
interface Delivery {
  payload: unknown;
  attempt: number;
}
let deliver: (delivery: Delivery) => void = () => undefined;
const delivered = new Promise<Delivery>((resolve) => (deliver = resolve));

@Injectable()
class Greetings {
  @QueueHandler(TOPIC)
  async greet(payload: unknown, context: MessageContext): Promise<void> {
    deliver({ payload, attempt: context.attempt });
  }
}

@Module({
  imports: [RedisAckQueueModule.forRoot({ connection: process.env.REDIS_URL, prefix: process.env.PREFIX })],
  providers: [Greetings],
})
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  const queue = app.get(RedisAckQueueService);
  await queue.push(TOPIC, { hello: 'world' });
  const delivery = await delivered;
  await queue.waitUntilIdle(TOPIC);
  const stats = await queue.stats(TOPIC);
  await app.close();
  const format = typeof require === 'undefined' ? 'esm' : 'commonjs';
  console.log(
    JSON.stringify({ ...delivery, stats, format, testingContext: createMessageContext({ topic: TOPIC }).topic }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
