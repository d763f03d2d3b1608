import 'reflect-metadata';
import { Injectable, type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueHandler, RedisAckQueueModule, RedisAckQueueService } from '../../lib';
import type { BenchHandler, BenchMessage, QueueSystem, RunningConsumer, SystemFactory } from '../adapter';

/** Pushes through the service as an app's own provider would: injected. */
@Injectable()
class BenchProducer {
  constructor(readonly queue: RedisAckQueueService) {}
}

/** A producer-only app: `consumers: false`, so it runs no handler. */
function producerModule(url: string) {
  @Module({ imports: [RedisAckQueueModule.forRoot({ connection: url, consumers: false })], providers: [BenchProducer] })
  class BenchProducerModule {}
  return BenchProducerModule;
}

/** A consumer app: one provider with one `@QueueHandler`, as users write it. */
function consumerModule(url: string, topic: string, concurrency: number, handler: BenchHandler) {
  @Injectable()
  class BenchConsumer {
    @QueueHandler(topic, { concurrency })
    async handle(payload: BenchMessage): Promise<void> {
      handler(payload);
    }
  }
  @Module({ imports: [RedisAckQueueModule.forRoot({ connection: url })], providers: [BenchConsumer] })
  class BenchConsumerModule {}
  return BenchConsumerModule;
}

const NEST_LOGS = { logger: ['error', 'warn'] as ('error' | 'warn')[] };

export const createOurs: SystemFactory = async (url, topic) => {
  const producerApp: INestApplicationContext = await NestFactory.createApplicationContext(producerModule(url), NEST_LOGS);
  const { queue } = producerApp.get(BenchProducer);
  const system: QueueSystem = {
    name: 'this project',
    async push(payload) {
      await queue.push(topic, payload);
    },
    async pushBatch(payloads, dueAt) {
      await queue.pushMany(topic, payloads.map((payload, i) => ({ payload, availableAt: dueAt?.[i] })));
    },
    async startConsumer(concurrency, handler): Promise<RunningConsumer> {
      const app = await NestFactory.createApplicationContext(consumerModule(url, topic, concurrency, handler), NEST_LOGS);
      return { stop: () => app.close() };
    },
    close: () => producerApp.close(),
  };
  return system;
};
