import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, ModulesContainer, Reflector } from '@nestjs/core';
import type { Subscription } from 'rxjs';
import { InvalidQueueListenerError, RedisAckQueueError } from '../errors';
import { errorSummary } from '../errors/error-text';
import type { RedisAckQueueEvent } from '../interfaces';
import { QueueLogger } from '../observability/queue-logger';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { assertTopic } from '../queue/validation';
import { DEFAULTS, QUEUE_EVENT_TYPES } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { OnQueueEventMetadata } from './on-queue-event.decorator';
import { findQueueMethods, type QueueMethod } from './queue-methods.finder';
import { type QueueRegistration, registrationsIn } from './queue-registrations';
import { QUEUE_REGISTRATION } from './queue-tokens';
import { bindPerRequest, isBuiltOnce } from './request-scope.binder';
import { startWhenBuilt } from './settled-instance';

/** An `@OnQueueEvent` method of a provider or controller. */
export type ListenerSite = QueueMethod<OnQueueEventMetadata>;

interface Listener extends OnQueueEventMetadata {
  where: string;
  call(event: RedisAckQueueEvent): unknown;
}

type Method = (event: RedisAckQueueEvent) => unknown;

/**
 * Finds every `@OnQueueEvent` method of the app at module init (and those of lazily loaded
 * modules as they load, see lazy-module.hook.ts) and calls it with the matching events of
 * `events$` until the app shuts down. The stream is subscribed only when there are listeners
 * (events are built only while someone listens).
 */
@Injectable()
export class QueueEventExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new QueueLogger(this.registration.options.logLevel ?? DEFAULTS.logLevel);
  private readonly listeners: Listener[] = [];
  /** This queue's listeners that are called or being bound, so that no later scan adds them twice. */
  private readonly claimed = new Set<ListenerSite>();
  /** Set once module init has claimed its listeners: later ones arrive with lazily loaded modules. */
  private initialized = false;
  private closing = false;
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
    try {
      const sites = this.claimNew();
      this.initialized = true;
      this.start(sites);
    } catch (error) {
      // Startup fails: close the connections now, or they would keep the process alive.
      await this.queue.close(0);
      throw error;
    }
  }

  onApplicationShutdown(): void {
    this.closing = true;
    this.subscription?.unsubscribe();
  }

  /** After module init, claims the listeners of lazily loaded modules; checks like module init. */
  claimLateListeners(): ListenerSite[] {
    return this.initialized && !this.closing ? this.claimNew() : [];
  }

  /** Calls late listeners from now on, once their instances exist; a failure releases the claims. */
  async startLateListeners(sites: ListenerSite[]): Promise<void> {
    await startWhenBuilt(
      sites,
      this.modules,
      (failed) => this.release(failed),
      (built) => this.start(built),
    );
  }

  release(sites: ListenerSite[]): void {
    for (const site of sites) this.claimed.delete(site);
  }

  /** This queue's listeners not claimed yet, after checking every listener of the app. */
  private claimNew(): ListenerSite[] {
    const names = registrationsIn(this.modules).map(({ name }) => name);
    const sites = findQueueMethods(this.discovery, this.scanner, this.reflector).listeners;
    for (const site of sites) checkListener(site, names);
    const claimed = [...this.claimed];
    // Each registration's explorer serves the listeners of its own queue.
    const fresh = sites.filter(
      (site) =>
        site.queue === this.registration.name &&
        !claimed.some(({ wrapper, method }) => wrapper === site.wrapper && method === site.method),
    );
    for (const site of fresh) this.claimed.add(site);
    return fresh;
  }

  private start(sites: ListenerSite[]): void {
    for (const site of sites) {
      const call = this.bind(site);
      if (call) this.listeners.push({ ...site.metadata, where: site.where, call });
    }
    if (this.listeners.length === 0 || this.subscription) return;
    this.subscription = this.queue.events$.subscribe((event) => {
      for (const listener of this.listeners) {
        if (listener.type === event.type && (listener.topic === undefined || listener.topic === event.topic))
          this.deliver(listener, event);
      }
    });
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

  /**
   * A provider built once is called directly; one built per request is resolved per event,
   * with `REQUEST` = `{ queueEvent: event }`. A replacement (a test's overrideProvider) built
   * once without the method has nothing to call: the listener is left out.
   */
  private bind({ wrapper, method }: ListenerSite): Method | undefined {
    if (!isBuiltOnce(wrapper)) {
      const request = (event: RedisAckQueueEvent) => ({ queueEvent: event });
      return bindPerRequest(this.moduleRef, wrapper, request, (instance, _contextId, event) =>
        (instance[method] as Method)(event),
      );
    }
    const instance = wrapper.instance as Record<string, Method> | null | undefined;
    if (typeof instance?.[method] !== 'function') return undefined;
    return (event) => instance[method](event);
  }
}

/** A known event type, a valid topic and a registered queue, or an error that names the method. */
function checkListener({ metadata: { type, topic, queue }, where }: ListenerSite, names: string[]): void {
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
