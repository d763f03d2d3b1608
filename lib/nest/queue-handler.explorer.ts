import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import type { QueueHandlerMetadata } from './queue-handler.decorator';
import { InvalidQueueHandlerError, RedisAckQueueError } from '../errors';
import type { QueueConsumer, QueueHandlerFn, RedisAckQueueModuleOptions } from '../interfaces';
import { resolveConsumerSettings } from '../queue/settings';
import { assertTopic } from '../queue/validation';
import { QueueLogger } from '../observability/queue-logger';
import { DEFAULTS, QUEUE_HANDLER_METADATA } from '../redis-ack-queue.constants';
import { MESSAGES } from '../redis-ack-queue.messages';
import { bindQueueHandler } from './queue-handler.binder';
import { REDIS_ACK_QUEUE_OPTIONS } from './redis-ack-queue.module-definition';
import { RedisAckQueueService } from '../queue/redis-ack-queue.service';

interface FoundHandler extends QueueHandlerMetadata {
  where: string;
  handler: QueueHandlerFn;
}

/**
 * Finds every `@QueueHandler` of the app when it bootstraps and starts one consumer for
 * each; drains them before the app's connections close on shutdown.
 */
@Injectable()
export class QueueHandlerExplorer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new QueueLogger(this.options.logLevel ?? DEFAULTS.logLevel);
  private readonly consumers: QueueConsumer[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
    private readonly queue: RedisAckQueueService,
    @Inject(REDIS_ACK_QUEUE_OPTIONS) private readonly options: RedisAckQueueModuleOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.consumers === false) return;
    let handlers: FoundHandler[];
    try {
      handlers = this.explore();
      // A topic laid out differently in Redis (another partition count) fails startup here.
      await Promise.all(handlers.map((found) => this.queue.checkTopic(found.topic)));
    } catch (error) {
      // Startup fails: close the connections now, or they would keep the process alive.
      await this.queue.close(0);
      throw error;
    }
    for (const found of handlers) {
      this.consumers.push(this.queue.consume(found.topic, found.handler, found.options));
      const concurrency = found.options.concurrency ?? this.options.concurrency ?? DEFAULTS.concurrency;
      this.logger.log(MESSAGES.consumersStarted(found.topic, found.where, concurrency));
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.close()));
  }

  /** Every handler of the app, checked: valid topic and options, one handler per topic. */
  private explore(): FoundHandler[] {
    const byTopic = new Map<string, FoundHandler>();
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      const prototype = (wrapper.metatype as { prototype?: object } | null)?.prototype;
      if (!wrapper.metatype || !prototype || wrapper.inject) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const target = (prototype as Record<string, () => unknown>)[method];
        const metadata: QueueHandlerMetadata | undefined = this.reflector.get(QUEUE_HANDLER_METADATA, target);
        if (!metadata) continue;
        const where = `${wrapper.metatype.name}.${method}`;
        this.check(metadata, where);
        const first = byTopic.get(metadata.topic);
        if (first) throw InvalidQueueHandlerError.duplicate(metadata.topic, first.where, where);
        byTopic.set(metadata.topic, { ...metadata, where, handler: this.bind(wrapper, method) });
      }
    }
    return [...byTopic.values()];
  }

  private check(metadata: QueueHandlerMetadata, where: string): void {
    try {
      assertTopic(metadata.topic);
      resolveConsumerSettings(metadata.options, undefined);
    } catch (error) {
      if (!(error instanceof RedisAckQueueError)) throw error;
      throw new InvalidQueueHandlerError(where, MESSAGES.invalidHandler(where, error.message), { cause: error });
    }
  }

  /** Called directly when no enhancer applies, else through its guards, interceptors, pipes and filters (queue-handler.binder.ts). */
  private bind(wrapper: InstanceWrapper, method: string): QueueHandlerFn {
    return bindQueueHandler(this.moduleRef, wrapper, method);
  }
}
