import type { Lease } from '../engine/codecs/wire-format';
import type { ReplyInbox, ReplyNotices } from '../engine/redis/reply-inbox';
import type { ReplyWrite, RequestRef } from '../engine/stores/request-replies';
import type { ScalingReport } from '../interfaces';
import type { DeliveryTallies } from './delivery-tally';

/**
 * @internal The one way this package's own upper parts (the metrics, the Nest transport) reach
 * what a service and a handler context keep out of the public API: a service's request replies
 * and delivery tallies, and the delivery a handler context belongs to. Nothing here is exported
 * from the package, and no public object carries a key for it. It sits in queue/ because the
 * handler contexts (consumer/) fill it as well as the service; it names no class that reaches
 * the engine's root, so a handler context does not either (see the architecture test).
 */

/** Request-reply over ordinary messages, as the Nest transport uses it (QueueReplies does it). */
export interface ServiceReplies {
  /** A new caller channel of this prefix. */
  newChannel(): string;
  /** Whether `text` names a caller channel of this prefix. */
  isChannel(text: string | undefined): text is string;
  /**
   * Stores the reply of a running delivery (its lease), sealed by the topic's codec if it has one,
   * and announces it on `channel`: its id, or with `inline` the reply itself on the channel's
   * inline twin.
   */
  send(
    topic: string,
    lease: Lease | undefined,
    reply: string,
    ttlMs: number,
    channel: string,
    inline: boolean,
  ): Promise<ReplyWrite>;
  /** Whether the request was answered already (by an earlier delivery). */
  answered(topic: string, request: RequestRef): Promise<boolean>;
  /** The request's reply as stored (sealed, of a topic with a codec), once; undefined while there is none (or it was taken). */
  take(topic: string, request: RequestRef): Promise<string | undefined>;
  /** A reply's stored or published text opened (see ValueCodecs.open); a PayloadDecodeError when it cannot be. */
  open(topic: string, stored: string): Promise<string>;
  /** Marks a reply its caller heard whole as taken. */
  markTaken(topic: string, request: RequestRef): Promise<void>;
  /** Listens on a caller channel and its inline twin. */
  inbox(channel: string, notices: ReplyNotices): ReplyInbox;
}

/** What a service keeps for the package's own upper parts. */
export interface ServiceInternals {
  /** Request-reply over messages, for the Nest transport. */
  readonly replies: ServiceReplies;
  /** The tallies of its pushes, settled deliveries and cancels, for the metrics. */
  readonly tally: DeliveryTallies;
  /**
   * A topic's scaling signal (null without a target) from the backlog and `pushed` total a
   * metrics scrape read already (its gauges): one script call, partitioned topic or not.
   */
  readonly scaling: (topic: string, totals: { backlog: number; pushed: number }) => Promise<ScalingReport | null>;
  /** Whether the service has the option `outbox` (the metrics then read `outboxStatus()` at each scrape). */
  readonly outbox: boolean;
}

/** A running delivery: its lease, and whether its handler deferred it. */
export interface HeldDelivery extends Lease {
  /** The handler called `retryLater` or `rateLimited`: the delivery ends deferred. */
  deferred: boolean;
}

const services = new WeakMap<object, ServiceInternals>();

/** Reads the delivery of a handler context; undefined for any other object. */
type HeldDeliveryReader = (context: object) => HeldDelivery | undefined;

let readHeld: HeldDeliveryReader = () => undefined;

/** Called once by a service as it is built. */
export function registerServiceInternals(service: object, internals: ServiceInternals): void {
  services.set(service, internals);
}

/** The internals of a service of this package (a TypeError for any other object). */
export function internalsOf(service: object): ServiceInternals {
  const internals = services.get(service);
  if (!internals) throw new TypeError('Not a RedisAckQueueService of this package');
  return internals;
}

/**
 * Called once, by the handler context class: one reader for every context, rather than an entry
 * per context (a weak map entry per message costs more than the rest of its context).
 */
export function registerHeldDeliveryReader(reader: HeldDeliveryReader): void {
  readHeld = reader;
}

/** The delivery a handler context belongs to; undefined for a context made elsewhere (a test's). */
export function heldDeliveryOf(context: object): HeldDelivery | undefined {
  return readHeld(context);
}
