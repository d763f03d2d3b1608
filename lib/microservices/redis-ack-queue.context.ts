import { BaseRpcContext } from '@nestjs/microservices';
import type { ChildResults, FailedChild, MessageContext } from '../interfaces';
import type { RedisAckQueuePacketMetadata } from './packet-wire';

/**
 * What a {@link RedisAckQueueContext} holds: the message's context, the handler's pattern (its
 * route), and the metadata the client attached to the packet, if any.
 */
export type RedisAckQueueContextArgs = [MessageContext, string, RedisAckQueuePacketMetadata?];

/**
 * What `@Ctx()` gives a handler of {@link RedisAckQueueServer}: the pattern and the message's
 * {@link MessageContext} (id, topic, attempt, headers, `signal`, `extendLease`,
 * `retryLater`, `step`...), which it also offers directly.
 * @example
 * ```ts
 * @EventPattern('order.created')
 * async created(@Payload() order: Order, @Ctx() context: RedisAckQueueContext) {
 *   if (context.attempt > 1) this.logger.warn(`order ${context.id}: attempt ${context.attempt}`);
 *   await this.mailer.send(order, { signal: context.signal });
 * }
 * ```
 */
export class RedisAckQueueContext extends BaseRpcContext<RedisAckQueueContextArgs> implements MessageContext {
  /**
   * @param args - The message's context, the handler's pattern (its route) and the packet's metadata.
   */
  constructor(args: RedisAckQueueContextArgs) {
    super(args);
  }

  /** The message's context, as a `@QueueHandler` gets it. */
  getMessage(): MessageContext {
    return this.args[0];
  }

  /** The handler's pattern, as Nest keys it: the string, or the object's JSON with sorted keys. */
  getPattern(): string {
    return this.args[1];
  }

  /**
   * The metadata the client attached to the packet (Nest 12's `ClientProxy#setOnDispatchHook`),
   * as Nest's own contexts return it; undefined when it attached none.
   */
  getMetadata(): RedisAckQueuePacketMetadata | undefined {
    return this.args[2];
  }

  /** The topic the message came from. */
  getTopic(): string {
    return this.args[0].topic;
  }

  get id(): string {
    return this.args[0].id;
  }

  get topic(): string {
    return this.args[0].topic;
  }

  get attempt(): number {
    return this.args[0].attempt;
  }

  get maxAttempts(): number {
    return this.args[0].maxAttempts;
  }

  get headers(): Record<string, string> {
    return this.args[0].headers;
  }

  get enqueuedAt(): number {
    return this.args[0].enqueuedAt;
  }

  get group(): string | undefined {
    return this.args[0].group;
  }

  get signal(): AbortSignal {
    return this.args[0].signal;
  }

  extendLease(ms: number): Promise<boolean> {
    return this.args[0].extendLease(ms);
  }

  retryLater(delayMs: number): never {
    return this.args[0].retryLater(delayMs);
  }

  rateLimited(delayMs: number): never {
    return this.args[0].rateLimited(delayMs);
  }

  childResults(): ChildResults {
    return this.args[0].childResults();
  }

  failedChildren(): FailedChild[] {
    return this.args[0].failedChildren();
  }

  progress(value: unknown): void {
    this.args[0].progress(value);
  }

  step<R>(name: string, fn: () => R | Promise<R>): Promise<R> {
    return this.args[0].step(name, fn);
  }
}
