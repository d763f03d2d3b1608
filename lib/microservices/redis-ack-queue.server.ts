import type { CustomTransportStrategy, Deserializer, MessageHandler, Serializer } from '@nestjs/microservices';
import { Server } from '@nestjs/microservices';
import { isObservable } from 'rxjs';
import { asError } from '../errors/error-text';
import { DEFAULTS, LIMITS } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { MessageContext, QueueHandlerOptions, RedisAckQueueEvent } from '../interfaces';
import { ADOPT_QUEUE_SETTINGS, type AdoptedQueueSettings } from '../nest/transport-settings.binder';
import { heldDeliveryOf } from '../queue/queue-internals';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { patternHandlerOptions } from './pattern-options';
import { topicOfPattern } from './pattern-topic';
import { metadataOf, type RedisAckQueuePacketMetadata, type TransportPacket } from './packet-wire';
import { type ProcessingEndHook, type ProcessingStartHook, withProcessingHooks } from './processing-hooks';
import { RedisAckQueueContext } from './redis-ack-queue.context';
import { RedisAckQueueRejectException } from './redis-ack-queue-reject.exception';
import {
  DEFAULT_REPLY_WAIT_MS,
  encodeReply,
  REPLY_INLINE_HEADER,
  REPLY_TO_HEADER,
  REPLY_TTL_HEADER,
  responsePackets,
  type ReplyRecord,
} from './reply-wire';
import { TransportQueue } from './transport-queue';
import { failureOf, isRefusal } from './transport-refusals';
import type { RedisAckQueueServerOptions } from './transport-options.interface';
import { REDIS_ACK_QUEUE_TRANSPORT } from './transport-id';

/**
 * A handler's default concurrency on this transport: Nest's own transports run every message as
 * it arrives, so a ported app expects many at once; bounded, so a backlog does not start
 * thousands of handlers together. `concurrency` (server option or pattern extras) sets another.
 */
export const TRANSPORT_DEFAULT_CONCURRENCY = 50;

/** The events `on()` listens to: each type of the queue's events, with its event object. */
export type RedisAckQueueTransportEvents = {
  [Type in RedisAckQueueEvent['type']]: (event: RedisAckQueueEvent) => void;
};

/** The server's states, as `status` reports them. */
export type RedisAckQueueServerStatus = 'connected' | 'disconnected';

/**
 * A transport for `@nestjs/microservices` on this queue: `@EventPattern` and `@MessagePattern`
 * handlers consume their pattern's topic (see {@link topicOfPattern}) with leases, retries and
 * dead letters, as `@QueueHandler`s do.
 * - An event is acked when its handler's promise resolves (its Observable completes). An error
 *   is a failed delivery, retried with backoff, then dead-lettered with the error. A guard's
 *   denial, or a {@link RedisAckQueueRejectException}, dead-letters it at once as `rejected`.
 * - A request (`send`) gets one reply, stored in Redis with a TTL and announced to its caller:
 *   the handler's values in order, or the error its exception filters made (not retried).
 *   A request delivered again after its reply was stored is acked without running again.
 * - `close()` (Nest calls it on `app.close()`) drains: running handlers finish, prefetched
 *   messages go back without an attempt.
 *
 * It opens one command connection, one blocking connection per pattern and one pub/sub
 * connection (cancel notices). Pass an ioredis instance as `connection` to share the command
 * connection with a {@link RedisAckQueueClient} (or your own code).
 * @example
 * ```ts
 * const app = await NestFactory.createMicroservice(AppModule, {
 *   strategy: new RedisAckQueueServer({ connection: process.env.REDIS_URL, concurrency: 10 }),
 * });
 * await app.listen();
 * ```
 */
export class RedisAckQueueServer
  extends Server<RedisAckQueueTransportEvents, RedisAckQueueServerStatus>
  implements CustomTransportStrategy
{
  override readonly transportId = REDIS_ACK_QUEUE_TRANSPORT;
  /** Failed events are this transport's to report (retries, dead letters), not Nest's log. */
  override readonly propagatesEventHandlerErrors = true;
  private readonly queue: TransportQueue;
  private readonly maxReplyBytes: number;
  private readonly packetSerializer: Serializer | undefined;
  private readonly packetDeserializer: Deserializer | undefined;
  private listening = false;
  private closing: Promise<void> | undefined;

  /**
   * Checks the options; connects on `listen()`.
   * @param options - Connection and handler defaults; every option may be left out.
   * @throws {InvalidOptionError} when an option has a bad value.
   */
  constructor(options: RedisAckQueueServerOptions = {}) {
    super();
    const { serializer, deserializer, ...serviceOptions } = options;
    const concurrency = options.concurrency ?? TRANSPORT_DEFAULT_CONCURRENCY;
    this.queue = new TransportQueue({ ...serviceOptions, concurrency }, 'microservice');
    this.maxReplyBytes = options.maxPayloadBytes ?? DEFAULTS.maxPayloadBytes;
    this.packetSerializer = serializer;
    this.packetDeserializer = deserializer;
  }

  /**
   * @internal The app's default queue hands its prefix (when this server has none) and a test's
   * overrides before `listen()`; a listening server keeps its own.
   */
  [ADOPT_QUEUE_SETTINGS](settings: AdoptedQueueSettings): void {
    if (!this.listening) this.queue.adopt(settings);
  }

  private get service(): RedisAckQueueService {
    return this.queue.service;
  }

  /**
   * Connects, then starts one consumer per pattern; calls `callback` once every handler
   * consumes (with the error when the connection or an option failed).
   */
  async listen(callback: (error?: unknown) => void): Promise<void> {
    this.listening = true;
    try {
      const consumers: { topic: string; route: string; handler: MessageHandler; options: QueueHandlerOptions }[] = [];
      for (const [route, handler] of this.messageHandlers) {
        const topic = topicOfPattern(route);
        if (consumers.some((each) => each.topic === topic)) continue;
        consumers.push({ topic, route, handler, options: patternHandlerOptions(topic, handler.extras) });
      }
      await this.service.connect();
      for (const { topic, route, handler, options } of consumers) {
        const consume = (payload: unknown, context: MessageContext) => this.handle(route, handler, payload, context);
        this.service.consume(topic, consume, options);
      }
      this._status$.next('connected');
      callback();
    } catch (error) {
      callback(error);
    }
  }

  /** Drains the consumers (running handlers finish), then closes the connections. */
  close(): Promise<void> {
    this.queue.listeners.clear();
    this.closing ??= this.service.close().finally(() => this._status$.next('disconnected'));
    return this.closing;
  }

  /**
   * Calls `callback` with each event of this server's queue of type `event` (`'acked'`,
   * `'dead'`, `'retry'`...; see RedisAckQueueEvent) until the returned function is called or
   * the server closes. A callback added twice for one event is called once.
   * @typeParam EventKey - The event's type.
   * @typeParam EventCallback - Its listener.
   * @returns What removes the listener.
   */
  on<
    EventKey extends keyof RedisAckQueueTransportEvents = keyof RedisAckQueueTransportEvents,
    EventCallback extends RedisAckQueueTransportEvents[EventKey] = RedisAckQueueTransportEvents[EventKey],
  >(event: EventKey, callback: EventCallback): () => void {
    return this.queue.listeners.add(event, callback);
  }

  /** The queue service this server consumes with: push, inspect, requeue dead letters... */
  unwrap<T = RedisAckQueueService>(): T {
    return this.service as T;
  }

  private async handle(route: string, handler: MessageHandler, body: unknown, message: MessageContext): Promise<void> {
    const packet = await this.incoming(body, message);
    const context = new RedisAckQueueContext([message, route, packet.metadata]);
    const run = () =>
      withProcessingHooks(this.processingHooks(), this.transportId, context, async () =>
        valuesOf(packet.refusal ? Promise.reject(packet.refusal) : handler(packet.data, context), message),
      );
    const channel = message.headers[REPLY_TO_HEADER];
    if (channel === undefined) return this.settleEvent(run, context);
    if (!this.queue.replies.isChannel(channel)) {
      this.logger.warn(MESSAGES.unknownReplyChannel(message.topic));
      return this.settleEvent(run, context);
    }
    return this.answerRequest(run, context, channel);
  }

  /**
   * The data and metadata of a message: the body and its header, or what the `deserializer`
   * made of the body (a deserializer that throws refuses the message).
   */
  private async incoming(
    body: unknown,
    message: MessageContext,
  ): Promise<{ data?: unknown; metadata?: RedisAckQueuePacketMetadata; refusal?: Error }> {
    const metadata = metadataOf(message.headers);
    if (!this.packetDeserializer) return { data: body, metadata };
    try {
      const packet = (await this.packetDeserializer.deserialize(body, { channel: message.topic })) as TransportPacket;
      return { data: packet.data, metadata: packet.metadata ?? metadata };
    } catch (error) {
      const reason = MESSAGES.transportNotDeserialized(asError(error).name);
      return { metadata, refusal: new RedisAckQueueRejectException(reason) };
    }
  }

  /** Nest's processing hooks, as instrumentation set them (a Nest without them has none). */
  private processingHooks(): { start: ProcessingStartHook | undefined; end: ProcessingEndHook | undefined } {
    const hooks = this as unknown as {
      onProcessingStartHook?: ProcessingStartHook;
      onProcessingEndHook?: ProcessingEndHook;
    };
    return { start: hooks.onProcessingStartHook, end: hooks.onProcessingEndHook };
  }

  /** An event: settled when the handler's promise resolves or its Observable completes. */
  private async settleEvent(run: () => Promise<unknown[]>, context: RedisAckQueueContext): Promise<void> {
    try {
      await run();
    } catch (error) {
      throw failureOf(error, context.topic);
    }
  }

  /**
   * A request: the reply is stored (once, while this delivery holds the lease) before the ack.
   * Errors are answered, not retried; a refusal is also dead-lettered.
   */
  private async answerRequest(
    run: () => Promise<unknown[]>,
    context: RedisAckQueueContext,
    channel: string,
  ): Promise<void> {
    const message = context.getMessage();
    const request = { id: context.id, group: context.group };
    // Answered by a delivery that died before its ack: the caller has its reply.
    if (context.attempt > 1 && (await this.queue.replies.answered(context.topic, request))) return;
    let answer: { values: unknown[] } | { error: unknown };
    let failure: Error | undefined;
    try {
      answer = { values: await run() };
    } catch (error) {
      answer = { error };
      failure = failureOf(error, context.topic);
    }
    const held = heldDeliveryOf(message);
    // retryLater: no answer yet, the delivery ends deferred.
    if (held?.deferred) return;
    const record = await this.outgoing(answer, context);
    await this.queue.replies.send(
      context.topic,
      held,
      this.encode(record, context.topic),
      replyTtlMs(message),
      channel,
      message.headers[REPLY_INLINE_HEADER] === '1',
    );
    if (failure && isRefusal(failure)) throw failure;
  }

  /** The reply to store: the answer, or what the `serializer` made of its response packets. */
  private async outgoing(
    answer: { values: unknown[] } | { error: unknown },
    context: RedisAckQueueContext,
  ): Promise<ReplyRecord> {
    const serializer = this.packetSerializer;
    if (!serializer) return answer;
    try {
      const packets = responsePackets(answer, context.id);
      return {
        packets: await Promise.all(packets.map(async (packet) => (await serializer.serialize(packet)) as unknown)),
      };
    } catch (error) {
      const text = MESSAGES.replyNotSent(context.topic, MESSAGES.serializerThrew(asError(error).name));
      this.logger.warn(text);
      return { error: { status: 'error', message: text } };
    }
  }

  /** The reply's stored text; one that cannot be stored reaches the caller as an error saying why. */
  private encode(record: ReplyRecord, topic: string): string {
    const encoded = encodeReply(record, this.maxReplyBytes);
    if ('text' in encoded) return encoded.text;
    const text = MESSAGES.replyNotSent(topic, encoded.problem);
    this.logger.warn(text);
    const answer = encodeReply({ error: { status: 'error', message: text } }, Infinity);
    return 'text' in answer ? answer.text : text;
  }
}

/**
 * A handler's values, in order, once its promise resolves and its Observable completes. An
 * Observable is unsubscribed when the delivery's signal aborts (a cancel, a timeout, a lost
 * lease, the end of a drain), which rejects with the signal's reason: an endless stream does
 * not hold its consumer's slot.
 */
async function valuesOf(result: Promise<unknown>, context: MessageContext): Promise<unknown[]> {
  const value: unknown = await result;
  if (!isObservable(value)) return [value];
  const { signal } = context;
  return new Promise((resolve, reject) => {
    const values: unknown[] = [];
    const onAbort = () => {
      subscription.unsubscribe();
      reject(asError(signal.reason));
    };
    const subscription = value.subscribe({
      next: (each) => values.push(each),
      error: (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what the filters made, as it is
        reject(error);
      },
      complete: () => {
        signal.removeEventListener('abort', onAbort);
        resolve(values);
      },
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * How long a reply is kept: as long as its caller waits, and at least two leases, so that a
 * redelivery after a crash still finds it answered.
 */
function replyTtlMs(context: MessageContext): number {
  const asked = Number(context.headers[REPLY_TTL_HEADER]);
  const wait = Number.isInteger(asked) && asked > 0 && asked <= LIMITS.maxTimerMs ? asked : DEFAULT_REPLY_WAIT_MS;
  return Math.max(wait, 60_000) + 5_000;
}
