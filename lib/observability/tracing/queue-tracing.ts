import type * as OtelApi from '@opentelemetry/api';
import type { MessageContext, PushManyItem, RedisAckQueueTracingOptions, ReservedMessage } from '../../interfaces';
import { requirePeer } from '../optional-peer';
import { spanContextMaker, type SpanContextMaker } from './span-context';

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
  /** A delivery's context: its parent with its span (see spanContextMaker). */
  readonly spanContext: SpanContextMaker;
  private readonly tracer: OtelApi.Tracer;

  constructor(private readonly options: RedisAckQueueTracingOptions = {}) {
    this.api = requirePeer<typeof OtelApi>('@opentelemetry/api', 'The tracing option');
    this.tracer = this.api.trace.getTracer('nestjs-redis-ack-queue');
    this.spanContext = spanContextMaker(this.api);
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
    return new DeliveryTracing(this, topic, this.options.batchSpans === true);
  }

  /** Starts a `process <topic>` span under `parent`, with the messaging attributes of `message`. */
  startProcess(topic: string, message: Pick<MessageContext, 'id' | 'attempt'>, parent: OtelApi.Context): OtelApi.Span {
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

  /** Starts the `process <topic>` span of a batch of `count` messages (a root, linked to their parents). */
  startBatch(topic: string, count: number, links: OtelApi.Link[]): OtelApi.Span {
    const attributes: OtelApi.Attributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.destination.name': topic,
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.batch.message_count': count,
    };
    const kind = this.api.SpanKind.CONSUMER;
    return this.tracer.startSpan(`process ${topic}`, { kind, attributes, links }, this.api.ROOT_CONTEXT);
  }

  /** Ends a span, recording `error` first when the work failed. */
  end(span: OtelApi.Span, failed: boolean, error: unknown): void {
    if (failed) this.fail(span, error);
    span.end();
  }

  /** Records `error` on `span`: an `exception` event, status ERROR and `error.type`. */
  fail(span: OtelApi.Span, error: unknown): void {
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
  /** A batch span's: the messages of its batch not settled or handed back yet; it ends at 0. */
  open?: number;
}

/**
 * The tracing of one consumer's deliveries, driven by its poller and LeaseKeeper: `start` before
 * a handler runs gives the context to run it in (and the span, if any), the keeper ends the span
 * from its own completion (no promise of its own per message). The parent is extracted once per
 * distinct set of propagation headers (the messages of one pushMany share one). A message whose
 * parent trace is not sampled gets no span: its handler runs in the parent's context, so the
 * spans it starts see the same sampling decision (with ParentBased samplers, the SDK's default,
 * the child span would not have been recorded either). With `batchSpans`, `reserved` opens one
 * span per reserved batch, linked to each message's parent, and every handler of it runs in it.
 */
export class DeliveryTracing {
  private readonly api: typeof OtelApi;
  /** The propagation headers last extracted (names and values), and their context. */
  private lastFields: string[] = [];
  private lastValues: (string | undefined)[] = [];
  private lastParent: OtelApi.Context;
  /** When that parent is not sampled: the trace of its messages (its context, no span), shared. */
  private unsampled: DeliveryTrace | undefined;
  /** With batchSpans: the batch span of each reserved message that has not started yet. */
  private readonly batches: WeakMap<ReservedMessage<unknown>, DeliveryTrace> | undefined;

  constructor(
    private readonly tracing: QueueTracing,
    private readonly topic: string,
    batchSpans: boolean,
  ) {
    this.api = tracing.api;
    this.lastParent = this.api.ROOT_CONTEXT;
    if (batchSpans) this.batches = new WeakMap();
  }

  /** Batch spans: opens the span of the messages of one reserve (each is started or handed back later). */
  reserved(messages: ReservedMessage<unknown>[]): void {
    if (!this.batches || messages.length === 0) return;
    const { api } = this;
    const links: OtelApi.Link[] = [];
    for (const message of messages) {
      const remote = api.trace.getSpanContext(this.parentOf(message.headers));
      if (remote !== undefined)
        links.push({
          context: remote,
          attributes: { 'messaging.message.id': message.id, [ATTEMPT_ATTRIBUTE]: message.attempt },
        });
    }
    const span = this.tracing.startBatch(this.topic, messages.length, links);
    const trace: DeliveryTrace = { context: api.trace.setSpan(api.ROOT_CONTEXT, span), span, open: messages.length };
    for (const message of messages) this.batches.set(message, trace);
  }

  /** The context to run `message`'s handler in, and its span (undefined where none is recorded). */
  start(message: ReservedMessage<unknown>): DeliveryTrace {
    const batch = this.batches?.get(message);
    if (batch) {
      this.batches!.delete(message);
      return batch;
    }
    const parent = this.parentOf(message.headers);
    if (this.unsampled) return this.unsampled;
    const span = this.tracing.startProcess(this.topic, message, parent);
    return { context: this.tracing.spanContext(parent, span), span };
  }

  /** Runs `fn(a, b, c)` in `context` (no closure per message). */
  run<A, B, C, R>(context: OtelApi.Context, fn: (a: A, b: B, c: C) => R, a: A, b: B, c: C): R {
    return this.api.context.with(context, fn, undefined, a, b, c);
  }

  /** A delivery settled (failed: with `error`): ends its span, or its batch's once the last settled. */
  settled(trace: DeliveryTrace, failed: boolean, error: unknown): void {
    const { span } = trace;
    if (!span) return;
    if (trace.open === undefined) return this.tracing.end(span, failed, error);
    if (failed) this.tracing.fail(span, error);
    if (--trace.open === 0) span.end();
  }

  /** Batch spans: messages handed back without running no longer hold their batch's span open. */
  released(messages: ReservedMessage<unknown>[]): void {
    if (!this.batches) return;
    for (const message of messages) {
      const batch = this.batches.get(message);
      if (!batch) continue;
      this.batches.delete(message);
      if (--batch.open! === 0) batch.span!.end();
    }
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
      const parent = api.propagation.extract(api.ROOT_CONTEXT, headers);
      const remote = api.trace.getSpanContext(parent);
      const sampled = remote === undefined || (remote.traceFlags & api.TraceFlags.SAMPLED) !== 0;
      this.unsampled = sampled ? undefined : { context: parent, span: undefined };
      this.lastParent = parent;
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
