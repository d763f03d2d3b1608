import { randomUUID } from 'node:crypto';
import { ClientProxy, type ReadPacket, type Serializer, type WritePacket } from '@nestjs/microservices';
import { DuplicateRequestError, InvalidOptionError, QueueClosedError } from '../errors';
import type { KeyedPushResult, PlainPushOptions, PushOptions, PushResult } from '../interfaces';
import type { ReplyInbox } from '../engine/redis/reply-inbox';
import { keyModeOf } from '../queue/key-modes';
import { assertBounded } from '../queue/validation';
import { ADOPT_QUEUE_SETTINGS, type AdoptedQueueSettings } from '../nest/transport-settings.binder';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { type TransportPacket, withMetadata } from './packet-wire';
import { topicOfPattern } from './pattern-topic';
import { PendingRequests } from './pending-requests';
import { PushCoalescer } from './push-coalescer';
import { RedisAckQueueRecord, type RedisAckQueueRecordOptions } from './redis-ack-queue.record';
import type { RedisAckQueueTransportEvents } from './redis-ack-queue.server';
import { DEFAULT_REPLY_WAIT_MS, REPLY_INLINE_HEADER, REPLY_TO_HEADER, REPLY_TTL_HEADER } from './reply-wire';
import { TransportQueue } from './transport-queue';
import type { RedisAckQueueClientOptions } from './transport-options.interface';

/**
 * A `ClientProxy` of {@link RedisAckQueueServer}: `emit` pushes an event, `send` a request whose
 * reply it waits for. Register it with `ClientsModule.register([{ name, customClass:
 * RedisAckQueueClient, options }])`.
 * - `emit(pattern, data)` completes with the push's `{ id, duplicate }` once the message is
 *   stored (with `replicatedPushes`, once replicated), and errors with the library's typed errors.
 * - `send(pattern, data)` emits the handler's values, then completes; it errors with the
 *   error the server's exception filters made, or a `RequestTimeoutError` after `timeoutMs`.
 *   Unsubscribing before the reply (or the timeout) cancels the request.
 * - Wrap `data` in a {@link RedisAckQueueRecord} to give one message its options (id,
 *   delayMs, priority, group, headers, maxAttempts; `timeoutMs` for a request).
 *
 * It opens one command connection, and a pub/sub connection for replies at its first `send`.
 * Its `status` is `'connected'` once connected, `'disconnected'` once closed.
 */
export class RedisAckQueueClient extends ClientProxy {
  private readonly queue: TransportQueue;
  private readonly pending: PendingRequests;
  /** The reply channel of this client's requests (under the prefix of the service in use). */
  private channel: string;
  private readonly timeoutMs: number;
  private readonly packetSerializer: Serializer | undefined;
  /** Pushes of one event-loop turn, one call per topic; none with tracing (each push has its caller's span). */
  private readonly pushes: PushCoalescer | undefined;
  private connecting: Promise<void> | undefined;
  private inbox: Promise<ReplyInbox> | undefined;
  private closed = false;

  /**
   * Checks the options; connects on first use (or `connect()`).
   * @param options - Connection options and the default request timeout; every option may be left out.
   * @throws {InvalidOptionError} when an option has a bad value.
   */
  constructor(options: RedisAckQueueClientOptions = {}) {
    super();
    const { timeoutMs = DEFAULT_REPLY_WAIT_MS, serializer, deserializer, ...serviceOptions } = options;
    assertBounded('timeoutMs', timeoutMs);
    this.timeoutMs = timeoutMs;
    // A client only pushes: it runs no schedules.
    this.queue = new TransportQueue({ ...serviceOptions, scheduler: false }, 'client');
    this.channel = this.queue.replies.newChannel();
    this.pending = new PendingRequests(
      {
        take: (topic, request) => this.queue.replies.take(topic, request),
        open: (topic, text) => this.queue.replies.open(topic, text),
        markTaken: (topic, request) => this.queue.replies.markTaken(topic, request),
        cancel: (topic, id) => this.service.cancel(topic, id),
      },
      deserializer,
    );
    this.packetSerializer = serializer;
    this.pushes = serviceOptions.tracing ? undefined : new PushCoalescer();
  }

  /**
   * @internal The app's default queue hands its prefix (when this client has none) and a test's
   * overrides at module init; a client that connected already keeps its own.
   */
  [ADOPT_QUEUE_SETTINGS](settings: AdoptedQueueSettings): void {
    if (this.connecting || this.closed) return;
    if (this.queue.adopt(settings)) this.channel = this.queue.replies.newChannel();
  }

  private get service(): RedisAckQueueService {
    return this.queue.service;
  }

  /**
   * Connects to Redis (Nest calls it before the first `emit` or `send`). After `close()` it
   * connects anew, with new connections, as Nest's own clients do.
   */
  connect(): Promise<void> {
    if (this.closed) this.reopen();
    this.connecting ??= this.service.connect().then(
      () => this._status$.next('connected'),
      (error: unknown) => {
        this.connecting = undefined;
        throw error;
      },
    );
    return this.connecting;
  }

  /** Fails the requests still waiting, then closes the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // What this close ends, read now: a connect() before it finishes opens new ones.
    const service = this.service;
    const inbox = this.inbox;
    this.queue.listeners.clear();
    this.pending.failAll(new QueueClosedError('wait for a reply'));
    await (await inbox?.catch(() => undefined))?.close();
    await service.close();
    if (this.service === service) this._status$.next('disconnected');
  }

  /** A closed client's new service, reply channel and inbox, for a connect() after close(). */
  private reopen(): void {
    this.closed = false;
    this.connecting = undefined;
    this.inbox = undefined;
    this.queue.renew();
    this.channel = this.queue.replies.newChannel();
  }

  /**
   * Calls `callback` with each event of this client's queue of type `event` (`'pushed'`...)
   * until the returned function is called or the client closes. A callback added twice for one
   * event is called once.
   * @typeParam EventKey - The event's type.
   * @typeParam EventCallback - Its listener.
   * @returns What removes the listener.
   */
  override on<
    EventKey extends keyof RedisAckQueueTransportEvents = keyof RedisAckQueueTransportEvents,
    EventCallback extends RedisAckQueueTransportEvents[EventKey] = RedisAckQueueTransportEvents[EventKey],
  >(event: EventKey, callback: EventCallback): () => void {
    return this.queue.listeners.add(event, callback);
  }

  /** The queue service this client pushes with. */
  unwrap<T = RedisAckQueueService>(): T {
    return this.service as T;
  }

  /** Pushes a request and waits for its reply (Nest's `send` calls it); returns what stops waiting. */
  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    const { data, options } = unpack(packet.data);
    const { timeoutMs = this.timeoutMs, ...push } = options;
    const topic = topicOfPattern(packet.pattern);
    const id = push.id ?? randomUUID();
    let request: { stop: () => void; fail: (error: unknown) => void };
    try {
      assertBounded('timeoutMs', timeoutMs);
      const mode = keyModeOf(push);
      if (mode !== undefined)
        throw new InvalidOptionError(
          mode,
          push[mode],
          'no key mode with send (a request waits for its own message)',
          true,
        );
      request = this.pending.add(topic, { id, group: push.group }, timeoutMs, callback);
    } catch (error) {
      callback({ err: error });
      return () => undefined;
    }
    const headers = {
      ...withMetadata(push.headers, packet.metadata),
      [REPLY_TO_HEADER]: this.channel,
      [REPLY_TTL_HEADER]: String(timeoutMs),
      [REPLY_INLINE_HEADER]: '1',
    };
    this.listen()
      .then(() => this.bodyOf({ pattern: packet.pattern, data, id, metadata: packet.metadata }))
      // No key mode here: refused above.
      .then((body) => this.pushOne(topic, body, { ...push, id, headers } as PlainPushOptions))
      .then((pushed) => {
        // Another client's request of this id is stored: it is that caller's (reply and cancel).
        if ('duplicate' in pushed && pushed.duplicate) request.fail(new DuplicateRequestError(topic, id));
      })
      .catch((error: unknown) => request.fail(error));
    return request.stop;
  }

  /** Pushes an event (Nest's `emit` calls it). */
  protected async dispatchEvent<T = PushResult>(packet: ReadPacket): Promise<T> {
    const { data, options } = unpack(packet.data);
    const { timeoutMs: _requestsOnly, ...push } = options;
    const headers = withMetadata(push.headers, packet.metadata);
    const body = await this.bodyOf({ pattern: packet.pattern, data, metadata: packet.metadata });
    return (await this.pushOne(topicOfPattern(packet.pattern), body, { ...push, headers })) as T;
  }

  /** Pushes one message: with the others of this turn, unless tracing gives each push its own span. */
  private pushOne(topic: string, payload: unknown, options: PushOptions): Promise<KeyedPushResult> {
    if (!this.pushes) return this.service.push(topic, payload, options);
    return this.pushes.push(this.service, topic, { ...options, payload });
  }

  /** A message's body: the data, or what the `serializer` made of the packet (sent through JSON as Nest's are). */
  private async bodyOf(packet: TransportPacket): Promise<unknown> {
    if (!this.packetSerializer) return packet.data;
    if (packet.metadata === undefined) delete packet.metadata;
    return asNestSends(await this.packetSerializer.serialize(packet));
  }

  /** The reply channels, subscribed before the first request is pushed. */
  private listen(): Promise<ReplyInbox> {
    this.inbox ??= (async () => {
      const inbox = this.queue.replies.inbox(this.channel, {
        answered: (id) => this.pending.answered(id),
        replied: (id, reply) => this.pending.replied(id, reply),
        resubscribed: () => this.pending.sweepAll(),
      });
      await inbox.open();
      return inbox;
    })();
    const inbox = this.inbox;
    inbox.catch(() => {
      if (this.inbox === inbox) this.inbox = undefined;
    });
    return inbox;
  }
}

/** A call's data and message options: from a RedisAckQueueRecord, or none. */
function unpack(data: unknown): { data: unknown; options: RedisAckQueueRecordOptions } {
  return data instanceof RedisAckQueueRecord
    ? { data: asNestSends(data.data), options: data.options }
    : { data: asNestSends(data), options: {} };
}

/**
 * The data as Nest's transports send it, through JSON: undefined fields dropped, Dates as
 * strings. What JSON cannot hold at all (a BigInt, a cycle) is left for the push to refuse,
 * with its typed error.
 */
function asNestSends(data: unknown): unknown {
  try {
    const text = JSON.stringify(data);
    return text === undefined ? data : (JSON.parse(text) as unknown);
  } catch {
    return data;
  }
}
