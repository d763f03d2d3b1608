import type * as OtelApi from '@opentelemetry/api';
import type { MessageContext, PushManyItem } from '../../interfaces';
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
  readonly api: typeof OtelApi;
  private readonly tracer: OtelApi.Tracer;

  constructor() {
    this.api = requirePeer<typeof OtelApi>('@opentelemetry/api', 'The tracing option');
    this.tracer = this.api.trace.getTracer('nestjs-redis-ack-queue');
  }

  /**
   * Runs `push` in a `send <topic>` span, with that span's context in every item's headers: one
   * carrier per call, shared by its items (a header the caller gave wins).
   */
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
      let traced = items;
      if (Array.isArray(items)) {
        const carrier: Record<string, string> = {};
        api.propagation.inject(context, carrier);
        traced = items.map((item) => withCarrier(carrier, item));
      }
      return await api.context.with(context, () => push(traced));
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  /** The tracing of one consumer's deliveries of `topic` (see DeliveryTracing). */
  deliveries(topic: string): DeliveryTracing {
    return new DeliveryTracing(this, topic);
  }

  /** Starts a `process <topic>` span under `parent`, with the messaging attributes of `message`. */
  startProcess(topic: string, message: MessageContext, parent: OtelApi.Context): OtelApi.Span {
    return this.tracer.startSpan(
      `process ${topic}`,
      {
        kind: this.api.SpanKind.CONSUMER,
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
  }

  /** Ends a span, recording `error` first when the work failed. */
  end(span: OtelApi.Span, failed: boolean, error: unknown): void {
    if (failed) this.fail(span, error);
    span.end();
  }

  private fail(span: OtelApi.Span, error: unknown): void {
    const exception = error instanceof Error ? error : new Error(String(error));
    span.recordException({ name: exception.name, message: exception.message, stack: exception.stack });
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: exception.message });
    span.setAttribute('error.type', exception.name);
  }
}

/** The context a delivery's handler runs in, and its span (undefined where none is recorded). */
export interface DeliveryTrace {
  readonly context: OtelApi.Context;
  readonly span: OtelApi.Span | undefined;
}

/**
 * The tracing of one consumer's deliveries, driven by its LeaseKeeper: `start` before the
 * handler runs gives the context to run it in (and the span, if any), the keeper ends the span
 * from its own completion (no promise of its own per message). The parent is extracted once per
 * distinct set of propagation headers (the messages of one pushMany share one). A message whose
 * parent trace is not sampled gets no span: its handler runs in the parent's context, so the
 * spans it starts see the same sampling decision (with ParentBased samplers, the SDK's default,
 * the child span would not have been recorded either).
 */
export class DeliveryTracing {
  private readonly api: typeof OtelApi;
  /** The propagation headers last extracted (names and values), and their context. */
  private lastFields: string[] = [];
  private lastValues: (string | undefined)[] = [];
  private lastParent: OtelApi.Context;

  constructor(
    private readonly tracing: QueueTracing,
    private readonly topic: string,
  ) {
    this.api = tracing.api;
    this.lastParent = this.api.ROOT_CONTEXT;
  }

  /** The context to run `message`'s handler in, and its span (undefined where none is recorded). */
  start(message: MessageContext): DeliveryTrace {
    const { api } = this;
    const parent = this.parentOf(message.headers);
    const remote = api.trace.getSpanContext(parent);
    if (remote !== undefined && (remote.traceFlags & api.TraceFlags.SAMPLED) === 0)
      return { context: parent, span: undefined };
    const span = this.tracing.startProcess(this.topic, message, parent);
    return { context: api.trace.setSpan(parent, span), span };
  }

  /** Runs `fn(a, b, c)` in `context` (no closure per message). */
  run<A, B, C, R>(context: OtelApi.Context, fn: (a: A, b: B, c: C) => R, a: A, b: B, c: C): R {
    return this.api.context.with(context, fn, undefined, a, b, c);
  }

  /** Ends the span of a delivery that settled (failed: with `error`). */
  end(span: OtelApi.Span, failed: boolean, error: unknown): void {
    this.tracing.end(span, failed, error);
  }

  private parentOf(headers: Record<string, string>): OtelApi.Context {
    const { api } = this;
    // The headers the propagator reads (traceparent and tracestate with W3C's): the same values
    // as last time give the same context.
    const fields = api.propagation.fields();
    let same = fields.length === this.lastFields.length;
    for (let i = 0; i < fields.length && same; i++)
      same = fields[i] === this.lastFields[i] && headers[fields[i]] === this.lastValues[i];
    if (!same) {
      this.lastParent = api.propagation.extract(api.ROOT_CONTEXT, headers);
      this.lastFields = fields;
      this.lastValues = fields.map((field) => headers[field]);
    }
    return this.lastParent;
  }
}

/** `item` with the carrier's headers under its own (the caller's win); an invalid headers value is left for validation. */
function withCarrier(carrier: Record<string, string>, item: PushManyItem): PushManyItem {
  if (typeof item !== 'object' || item === null) return item;
  const headers = item.headers;
  if (headers !== undefined && (typeof headers !== 'object' || headers === null)) return item;
  return { ...item, headers: { ...carrier, ...headers } };
}
