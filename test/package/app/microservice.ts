// The transport (nestjs-redis-ack-queue/microservices) in a new app, built and run by
// test/package/packed.package-spec.ts from this one source in ES module and CommonJS apps on
// Nest 12 and 11: a microservice served by RedisAckQueueServer, a RedisAckQueueClient from
// ClientsModule (its customClass type-checks), one emit and one send.
// Env: REDIS_URL, PREFIX. Prints one JSON line: the event's delivery, the send's reply, the format.
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientsModule, Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { RedisAckQueueClient, RedisAckQueueContext, RedisAckQueueServer } from 'nestjs-redis-ack-queue/microservices';
import { firstValueFrom, lastValueFrom } from 'rxjs';

const CLIENT = 'SMOKE_CLIENT';
const options = { connection: process.env.REDIS_URL, prefix: process.env.PREFIX };
interface Delivery {
  data: unknown;
  attempt: number;
  topic: string;
}
let deliver: (delivery: Delivery) => void = () => undefined;
const delivered = new Promise<Delivery>((resolve) => (deliver = resolve));

@Controller()
class Handlers {
  // <string>: Nest 12's plain overload; its typed-event one wants `unknown` for the parameters after the payload.
  @EventPattern<string>('smoke.shipped')
  shipped(@Payload() data: unknown, @Ctx() context: RedisAckQueueContext): void {
    deliver({ data, attempt: context.attempt, topic: context.getTopic() });
  }

  @MessagePattern({ cmd: 'smoke.double' })
  double(@Payload() value: number): number {
    return value * 2;
  }
}

@Module({
  imports: [ClientsModule.register([{ name: CLIENT, customClass: RedisAckQueueClient, options }])],
  controllers: [Handlers],
})
class AppModule {}

async function main(): Promise<void> {
  const strategy = new RedisAckQueueServer(options);
  const app = await NestFactory.createMicroservice(AppModule, { strategy, logger: ['error', 'warn'] });
  await app.listen();
  const client = app.get<RedisAckQueueClient>(CLIENT);
  await lastValueFrom(client.emit('smoke.shipped', { order: 7 }));
  const event = await delivered;
  const reply = await firstValueFrom(client.send<number>({ cmd: 'smoke.double' }, 21));
  await app.close();
  const format = typeof require === 'undefined' ? 'esm' : 'commonjs';
  console.log(JSON.stringify({ event, reply, format }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
