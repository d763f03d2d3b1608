import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, ModulesContainer, Reflector } from '@nestjs/core';
import {
  InvalidQueueHandlerError,
  QueueHandlerProvidedTwiceError,
  RedisAckQueueError,
  UnknownQueueError,
} from '../errors';
import type { QueueConsumer, QueueHandlerFn, RedisAckQueueModuleOptions } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { resolveConsumerSettings } from '../queue/settings';
import { assertQueueName, assertTopic } from '../queue/validation';
import { DEFAULTS } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { InstanceWrapper } from './nest-internals';
import type { QueueHandlerMetadata } from './queue-handler.decorator';
import { findQueueMethods, type QueueMethod } from './queue-methods.finder';
import { markFoundHandlers } from './found-handlers';
import { assertOneRegistrationPerName, type QueueRegistration, registrationsIn } from './queue-registrations';
import { DEFAULT_QUEUE, QUEUE_REGISTRATION } from './queue-tokens';
import { isBuiltOnce } from './request-scope.binder';
import { startWhenBuilt } from './settled-instance';
import { QueueLogger } from '../observability/queue-logger';
import { bindQueueHandler } from './queue-handler.binder';
import { assertReplacedTopicsServed, replacementHandler } from './queue-test-overrides';

/** A `@QueueHandler` method of a provider or controller. */
export type HandlerSite = QueueMethod<QueueHandlerMetadata>;

/**
 * Runs one queue's `@QueueHandler`s (each registration has its own explorer): finds them when
 * the app bootstraps, after checking every handler and registration of the app, starts one
 * consumer each, and drains them before the app's connections close on shutdown.
 */
@Injectable()
export class QueueHandlerExplorer implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new QueueLogger(this.registration.options.logLevel ?? DEFAULTS.logLevel);
  private readonly consumers: QueueConsumer[] = [];
  /** This queue's handlers that run or are being started, by topic. */
  private readonly claimed = new Map<string, HandlerSite>();
  /** Set once the bootstrap has claimed its handlers: later ones arrive with lazily loaded modules. */
  private bootstrapped = false;
  private closing = false;
  private readonly queue: RedisAckQueueService;
  private readonly options: RedisAckQueueModuleOptions;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
    private readonly modules: ModulesContainer,
    @Inject(QUEUE_REGISTRATION) private readonly registration: QueueRegistration,
  ) {
    this.queue = registration.service;
    this.options = registration.options;
  }

  /** Marks the app's handler instances as found (even with `consumers: false`): see missing-module.hook.ts. */
  onModuleInit(): void {
    markFoundHandlers(findQueueMethods(this.discovery, this.scanner, this.reflector).handlers);
  }

  async onApplicationBootstrap(): Promise<void> {
    try {
      const sites = this.claimNew();
      this.bootstrapped = true;
      await this.start(sites);
    } catch (error) {
      // Startup fails: close every queue's connections now, or they would keep the process alive.
      await Promise.all(registrationsIn(this.modules).map(({ service }) => service.close(0)));
      throw error;
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    await Promise.all(this.consumers.map((consumer) => consumer.close()));
  }

  /** After bootstrap, claims the handlers of lazily loaded modules (see lazy-module.hook.ts); checks like the bootstrap. */
  claimLateHandlers(): HandlerSite[] {
    return this.bootstrapped && !this.closing ? this.claimNew() : [];
  }

  /** Starts late handlers once their instances exist; a failure releases the claims. */
  async startLateHandlers(sites: HandlerSite[]): Promise<void> {
    await startWhenBuilt(
      sites,
      this.modules,
      (failed) => this.release(failed),
      (built) => this.start(built),
    );
  }

  release(sites: HandlerSite[]): void {
    for (const site of sites)
      if (this.claimed.get(site.metadata.topic) === site) this.claimed.delete(site.metadata.topic);
  }

  /**
   * This queue's handlers that do not run yet, claimed so that no later scan starts them
   * twice. Checks every handler and registration of the app first: one registration per
   * name, a known queue for every handler, one handler per topic and queue.
   */
  private claimNew(): HandlerSite[] {
    // A producer-only process (consumers: false) runs and checks no handler.
    if (this.options.consumers === false) return [];
    const registrations = registrationsIn(this.modules);
    assertOneRegistrationPerName(registrations);
    const names = registrations.map(({ name }) => name);
    const sites = findQueueMethods(this.discovery, this.scanner, this.reflector).handlers;
    sites.forEach(checkHandler);
    assertReplacedTopicsServed(
      this.registration.overrides,
      sites.map(({ metadata }) => metadata.topic),
    );
    for (const site of sites)
      if (!names.includes(site.queue)) throw new UnknownQueueError(site.where, site.queue, names);
    const byTopic = new Map(this.claimed);
    const fresh: HandlerSite[] = [];
    for (const site of sites.filter(({ queue }) => queue === this.registration.name)) {
      const first = byTopic.get(site.metadata.topic);
      if (first?.wrapper === site.wrapper && first.method === site.method) continue;
      if (first && first.where === site.where && first.wrapper.metatype === site.wrapper.metatype)
        throw new QueueHandlerProvidedTwiceError(site.where.split('.')[0], [moduleOf(first), moduleOf(site)]);
      if (first) throw InvalidQueueHandlerError.duplicate(site.metadata.topic, first.where, site.where);
      byTopic.set(site.metadata.topic, site);
      fresh.push(site);
    }
    for (const site of fresh) this.claimed.set(site.metadata.topic, site);
    return fresh;
  }

  private async start(sites: HandlerSite[]): Promise<void> {
    sites.forEach(assertCallable);
    // A topic laid out differently in Redis (another partition count) fails startup here.
    await Promise.all(sites.map((site) => this.queue.checkTopic(site.metadata.topic)));
    const queueName = this.registration.name === DEFAULT_QUEUE ? undefined : this.registration.name;
    for (const { wrapper, method, metadata, where } of sites) {
      this.consumers.push(
        this.queue.consume(metadata.topic, this.bind(wrapper, method, metadata.topic), metadata.options),
      );
      const concurrency = metadata.options.concurrency ?? this.options.concurrency ?? DEFAULTS.concurrency;
      this.logger.log(MESSAGES.consumersStarted(metadata.topic, where, concurrency, queueName));
    }
  }

  /**
   * Called directly when no enhancer applies, else through its guards, interceptors, pipes and
   * filters (queue-handler.binder.ts); a test's replacement of the topic's handler instead, as it is.
   */
  private bind(wrapper: InstanceWrapper, method: string, topic: string): QueueHandlerFn {
    return replacementHandler(this.registration.overrides, topic) ?? bindQueueHandler(this.moduleRef, wrapper, method);
  }
}

/** The name of the module that provides a handler's class. */
function moduleOf({ wrapper }: HandlerSite): string {
  return wrapper.host?.metatype?.name ?? 'an unnamed module';
}

/** A valid topic, queue name and options, or an error that names the method. */
function checkHandler({ metadata, where }: HandlerSite): void {
  try {
    assertTopic(metadata.topic);
    if (metadata.queue !== undefined) assertQueueName(metadata.queue);
    resolveConsumerSettings(metadata.options, undefined);
  } catch (error) {
    if (!(error instanceof RedisAckQueueError)) throw error;
    throw new InvalidQueueHandlerError(where, MESSAGES.invalidHandler(where, error.message), { cause: error });
  }
}

/** A provider built once (not per message) must have the handler's method: a replacement may lack it. */
function assertCallable({ wrapper, method, where }: HandlerSite): void {
  if (!isBuiltOnce(wrapper)) return;
  const instance = wrapper.instance as Record<string, unknown> | null | undefined;
  if (typeof instance?.[method] !== 'function') throw InvalidQueueHandlerError.replacedWithoutMethod(where, method);
}
