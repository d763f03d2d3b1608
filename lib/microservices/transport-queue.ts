import type { RedisAckQueueOptions } from '../interfaces';
import type { AdoptedQueueSettings } from '../nest/transport-settings.binder';
import { internalsOf, type ServiceReplies } from '../queue/queue-internals';
import { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { TransportListeners } from './transport-listeners';

/**
 * The queue service of a transport server or client, and the listeners its `on()` added. Built
 * with the transport's own options (which checks them at once); built again, before it
 * connects, when the app hands the transport its prefix or a test's overrides, with the
 * listeners moved over; and built again when a closed client connects anew (Nest's clients may
 * `close()` and `connect()` again). The server and the client share this one owner of that swap.
 */
export class TransportQueue {
  readonly listeners: TransportListeners;
  private current: RedisAckQueueService;
  private currentReplies: ServiceReplies;
  /** The options and test hook the current service was built with, for a renewal to build it alike. */
  private built: { options: RedisAckQueueOptions; onService?: AdoptedQueueSettings['onService'] };

  constructor(
    private readonly options: RedisAckQueueOptions,
    /** Said in the service's startup log line. */
    private readonly role: 'microservice' | 'client',
  ) {
    this.built = { options };
    this.current = new RedisAckQueueService(options, role);
    this.currentReplies = internalsOf(this.current).replies;
    this.listeners = new TransportListeners(this.current.events$);
  }

  get service(): RedisAckQueueService {
    return this.current;
  }

  /** The request and reply side of the service. */
  get replies(): ServiceReplies {
    return this.currentReplies;
  }

  /**
   * Takes the app's settings: the caller hands them only before it connects. Returns whether the
   * service was replaced (nothing to change when the app has no prefix and no test overrides).
   */
  adopt(settings: AdoptedQueueSettings): boolean {
    const options = settings.options(this.options);
    if (options === this.options && !settings.onService) return false;
    const previous = this.current;
    this.build({ options, onService: settings.onService });
    // Never connected: closing it opens nothing.
    previous.close().catch(() => undefined);
    return true;
  }

  /** A new service built as the current one was, for a caller that closed the current one. */
  renew(): void {
    this.build(this.built);
  }

  private build(built: TransportQueue['built']): void {
    this.built = built;
    this.current = new RedisAckQueueService(built.options, this.role);
    this.currentReplies = internalsOf(this.current).replies;
    built.onService?.(this.current);
    this.listeners.follow(this.current.events$);
  }
}
