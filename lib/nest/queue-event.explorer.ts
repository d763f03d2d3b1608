import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit, type Type } from '@nestjs/common';
import {
  ContextIdFactory,
  DiscoveryService,
  MetadataScanner,
  ModuleRef,
  ModulesContainer,
  Reflector,
} from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import type { Subscription } from 'rxjs';
import { InvalidQueueListenerError, RedisAckQueueError } from '../errors';
import { errorSummary } from '../errors/error-text';
import type { RedisAckQueueEvent } from '../interfaces';
import { QueueLogger } from '../observability/queue-logger';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { assertTopic } from '../queue/validation';
import { DEFAULTS, QUEUE_EVENT_METADATA, QUEUE_EVENT_TYPES } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { OnQueueEventMetadata } from './on-queue-event.decorator';
import { type QueueRegistration, registrationsIn } from './queue-registrations';
import { DEFAULT_QUEUE, QUEUE_REGISTRATION } from './queue-tokens';

interface Listener extends OnQueueEventMetadata {
  where: string;
  call(event: RedisAckQueueEvent): unknown;
}

type Method = (event: RedisAckQueueEvent) => unknown;

/**
 * Finds every `@OnQueueEvent` method of the app at module init and calls it with the
 * matching events of `events$` until the app shuts down. The stream is subscribed only when
 * there are listeners (events are built only while someone listens).
 */
@Injectable()
export class QueueEventExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new QueueLogger(this.registration.options.logLevel ?? DEFAULTS.logLevel);
  private subscription: Subscription | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
    private readonly modules: ModulesContainer,
    @Inject(QUEUE_REGISTRATION) private readonly registration: QueueRegistration,
  ) {}

  private get queue(): RedisAckQueueService {
    return this.registration.service;
  }

  async onModuleInit(): Promise<void> {
    let listeners: Listener[];
    try {
      listeners = this.explore();
    } catch (error) {
      // Startup fails: close the connections now, or they would keep the process alive.
      await this.queue.close(0);
      throw error;
    }
    if (listeners.length === 0) return;
    this.subscription = this.queue.events$.subscribe((event) => {
      for (const listener of listeners) {
        if (listener.type === event.type && (listener.topic === undefined || listener.topic === event.topic))
          this.deliver(listener, event);
      }
    });
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }

  /** Calls one listener; what it throws or rejects with is logged, never passed on to the stream. */
  private deliver(listener: Listener, event: RedisAckQueueEvent): void {
    const failed = (error: unknown) =>
      this.logger.error(MESSAGES.listenerFailed(listener.where, event.type, event.topic, errorSummary(error)));
    try {
      const result = listener.call(event);
      if (result instanceof Promise) result.catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  private explore(): Listener[] {
    const listeners: Listener[] = [];
    const names = registrationsIn(this.modules).map(({ name }) => name);
    for (const wrapper of this.discovery.getProviders()) {
      const prototype = (wrapper.metatype as { prototype?: object } | null)?.prototype;
      if (!wrapper.metatype || !prototype || wrapper.inject) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const target = (prototype as Record<string, Method>)[method];
        const metadata: OnQueueEventMetadata | undefined = this.reflector.get(QUEUE_EVENT_METADATA, target);
        if (!metadata) continue;
        const where = `${wrapper.metatype.name}.${method}`;
        this.check(metadata, where, names);
        // Each registration's explorer serves the listeners of its own queue.
        if ((metadata.queue ?? DEFAULT_QUEUE) !== this.registration.name) continue;
        listeners.push({ ...metadata, where, call: this.bind(wrapper, method) });
      }
    }
    return listeners;
  }

  private check({ type, topic, queue }: OnQueueEventMetadata, where: string, names: string[]): void {
    if (!QUEUE_EVENT_TYPES.includes(type))
      throw new InvalidQueueListenerError(where, MESSAGES.unknownEventType(type, QUEUE_EVENT_TYPES));
    if (queue !== undefined && !names.includes(queue))
      throw new InvalidQueueListenerError(where, MESSAGES.unknownListenerQueue(queue, names));
    try {
      if (topic !== undefined) assertTopic(topic);
    } catch (error) {
      if (!(error instanceof RedisAckQueueError)) throw error;
      throw new InvalidQueueListenerError(where, error.message, { cause: error });
    }
  }

  /** A static provider is called directly; a request-scoped one is resolved per event. */
  private bind(wrapper: InstanceWrapper, method: string): (event: RedisAckQueueEvent) => unknown {
    if (wrapper.isDependencyTreeStatic() && !wrapper.isTransient) {
      const instance = wrapper.instance as Record<string, Method>;
      return (event) => instance[method](event);
    }
    return async (event) => {
      const contextId = ContextIdFactory.create();
      this.moduleRef.registerRequestByContextId({ queueEvent: event }, contextId);
      const instance = await this.moduleRef.resolve<unknown, Record<string, Method>>(
        wrapper.metatype as Type,
        contextId,
        { strict: false },
      );
      return instance[method](event);
    };
  }
}
