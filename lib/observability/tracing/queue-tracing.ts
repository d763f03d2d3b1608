import type * as OtelApi from '@opentelemetry/api';
import type { MessageContext, PushManyItem, QueueHandlerFn } from '../../interfaces';
import { requirePeer } from '../optional-peer';

/** `messaging.system` of every span. */
export const MESSAGING_SYSTEM = 'redis-ack-queue';
/** The delivery's attempt (1 on the first delivery): no semantic convention names it. */
export const ATTEMPT_ATTRIBUTE = 'messaging.redis_ack_queue.attempt';

/**
 * OpenTelemetry tracing of one service, with `@opentelemetry/api` (an optional peer, loaded
 * here): a push runs in a PRODUCER span and injects its context into each message's headers
 * (W3C `traceparent` with the default propagator; a header the caller set wins), and each
 * delivery runs its handler in a CONSUMER span whose parent is the context extracted from the
 * message's headers. Attributes are the messaging semantic conventions; never a payload.
 */
export class QueueTracing {
  private readonly api: typeof OtelApi;
  private readonly tracer: OtelApi.Tracer;

  constructor() {
    this.api = requirePeer<typeof OtelApi>('@opentelemetry/api', 'The tracing option');
    this.tracer = this.api.trace.getTracer('nestjs-redis-ack-queue');
  }

  /** Runs `push` in a `send <topic>` span, with that span's context in every item's headers. */
  async push<R>(topic: string, items: PushManyItem[], push: (items: PushManyItem[]) => Promise<R>): Promise<R> {
    const { api } = this;
    const attributes: OtelApi.Attributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.destination.name': topic,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
    };
    if (Array.isArray(items)) {
      if (items.length === 1 && typeof items[0]?.id === 'string') attributes['messaging.message.id'] = items[0].id;
      if (items.length !== 1) attributes['messaging.batch.message_count'] = items.length;
    }
    const span = this.tracer.startSpan(`send ${topic}`, { kind: api.SpanKind.PRODUCER, attributes });
    const context = api.trace.setSpan(api.context.active(), span);
    try {
      const traced = Array.isArray(items) ? items.map((item) => this.inject(context, item)) : items;
      return await api.context.with(context, () => push(traced));
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** The handler, run in a `process <topic>` span that continues the producer's trace. */
  wrap<T>(topic: string, handler: QueueHandlerFn<T>): QueueHandlerFn<T> {
    const { api, tracer } = this;
    return (payload: T, message: MessageContext) => {
      const parent = api.propagation.extract(api.ROOT_CONTEXT, message.headers);
      const span = tracer.startSpan(
        `process ${topic}`,
        {
          kind: api.SpanKind.CONSUMER,
          attributes: {
            'messaging.system': MESSAGING_SYSTEM,
            'messaging.destination.name': topic,
            'messaging.operation.type': 'process',
            'messaging.operation.name': 'process',
            'messaging.message.id': message.id,
            [ATTEMPT_ATTRIBUTE]: message.attempt,
          },
        },
        parent,
      );
      const settle = (error?: unknown) => {
        if (error !== undefined) this.fail(span, error);
        span.end();
      };
      let work: Promise<unknown>;
      try {
        work = Promise.resolve(api.context.with(api.trace.setSpan(parent, span), () => handler(payload, message)));
      } catch (error) {
        settle(error);
        throw error;
      }
      return work.then(
        () => settle(),
        (error: unknown) => {
          settle(error);
          throw error;
        },
      );
    };
  }

  private inject(context: OtelApi.Context, item: PushManyItem): PushManyItem {
    if (typeof item !== 'object' || item === null) return item;
    const carrier: Record<string, string> = {};
    this.api.propagation.inject(context, carrier);
    const headers = item.headers;
    // Headers the caller gave win; an invalid headers value is left for validation to refuse.
    if (headers !== undefined && (typeof headers !== 'object' || headers === null)) return item;
    return { ...item, headers: { ...carrier, ...headers } };
  }

  private fail(span: OtelApi.Span, error: unknown): void {
    const exception = error instanceof Error ? error : new Error(String(error));
    span.recordException({ name: exception.name, message: exception.message, stack: exception.stack });
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: exception.message });
    span.setAttribute('error.type', exception.name);
  }
}
