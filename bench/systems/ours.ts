import 'reflect-metadata';
import { Injectable, type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueHandler, RedisAckQueueModule, type RedisAckQueueModuleOptions, RedisAckQueueService } from '../../lib';
import type { BenchHandler, BenchMessage, QueueSystem, RunningConsumer, SystemFactory } from '../adapter';

/** What every app of one benchmark system shares: where Redis is and the topics' layout. */
export type OursOptions = Pick<RedisAckQueueModuleOptions, 'connection' | 'topics'>;

/** Pushes through the service as an app's own provider would: injected. */
@Injectable()
class BenchProducer {
  constructor(readonly queue: RedisAckQueueService) {}
}

/** A producer-only app: `consumers: false`, so it runs no handler. */
function producerModule(options: OursOptions) {
  @Module({ imports: [RedisAckQueueModule.forRoot({ ...options, consumers: false })], providers: [BenchProducer] })
  class BenchProducerModule {}
  return BenchProducerModule;
}

/** A consumer app: one provider with one `@QueueHandler`, as users write it. */
function consumerModule(options: OursOptions, topic: string, concurrency: number, handler: BenchHandler) {
  @Injectable()
  class BenchConsumer {
    @QueueHandler(topic, { concurrency })
    handle(payload: BenchMessage): Promise<void> {
      handler(payload);
      return Promise.resolve();
    }
  }
  @Module({ imports: [RedisAckQueueModule.forRoot({ ...options })], providers: [BenchConsumer] })
  class BenchConsumerModule {}
  return BenchConsumerModule;
}

const NEST_LOGS = { logger: ['error', 'warn'] as ('error' | 'warn')[] };

/** The system plus the producer app's service, for checks a workload makes itself (stats). */
export interface OursSystem extends QueueSystem {
  readonly service: RedisAckQueueService;
  /** The topic its consumers take (for workloads that push with options of their own). */
  readonly topic: string;
}

/** This project on any connection (a cluster included) and topic layout; every consumer is a Nest app of its own. */
export async function openOurs(options: OursOptions, topic: string): Promise<OursSystem> {
  const producerApp: INestApplicationContext = await NestFactory.createApplicationContext(
    producerModule(options),
    NEST_LOGS,
  );
  const { queue } = producerApp.get(BenchProducer);
  return {
    name: 'this project',
    service: queue,
    topic,
    async push(payload) {
      await queue.push(topic, payload);
    },
    async pushBatch(payloads, dueAt) {
      await queue.pushMany(
        topic,
        payloads.map((payload, i) => ({ payload, availableAt: dueAt?.[i] })),
      );
    },
    async startConsumer(concurrency, handler): Promise<RunningConsumer> {
      const app = await NestFactory.createApplicationContext(
        consumerModule(options, topic, concurrency, handler),
        NEST_LOGS,
      );
      return { stop: () => app.close() };
    },
    close: () => producerApp.close(),
  };
}

/** The main benchmark's system: one standalone redis-server by URL, library defaults otherwise. */
export const createOurs: SystemFactory = (url, topic) => openOurs({ connection: url }, topic);
