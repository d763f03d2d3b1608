import { hostname } from 'node:os';
import { Observable, type Subscription } from 'rxjs';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { FleetEventEntry, FleetEventStream } from '../engine/stores/fleet-event-stream';
import { errorSummary } from '../errors/error-text';
import type {
  DeadLetterReason,
  RedisAckQueueEvent,
  RedisAckQueueEventType,
  RedisAckQueueFleetEvent,
  RedisAckQueueFleetEventsOptions,
  RedisAckQueueOnExpire,
} from '../interfaces';
import { InvalidOptionError } from '../errors';
import type { QueueLogger } from '../observability/queue-logger';
import type { QueueEvents } from './queue-events';

/** The longest a batch waits before it is appended: the writer's delay, and its pipeline's size bound below. */
const FLUSH_MS = 50;
/** A batch this size is appended at once; an outage keeps at most ten, dropping the oldest. */
const BATCH = 500;
const MAX_BUFFERED = 10 * BATCH;
/** Each read waits this long for an entry, then reads again (or ends, once unsubscribed). */
const BLOCK_MS = 1_000;
const READ_COUNT = 200;
/** After a failed read (Redis away), the next one waits this long. */
const RETRY_MS = 500;
/** A stream id as Redis makes them: `<ms>-<seq>`. */
const STREAM_ID = /^\d+-\d+$/;

/**
 * The fleet-wide event stream of a service: with `fleetEvents`, a writer that appends every
 * event of this service (only the fields that identify it) to the prefix's capped stream in
 * batches, off the call that made the event; and in any service, readers of that stream.
 * Owns its writer's buffer and timer and its readers' connections; close() ends them all.
 */
export class FleetEvents {
  private readonly buffer: string[][] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private failing = false;
  private subscription: Subscription | undefined;
  private readonly readers = new Set<{ close(): void }>();
  private readonly origin = `${hostname()}:${process.pid}`;

  constructor(
    private readonly stream: FleetEventStream,
    private readonly logger: QueueLogger,
    private readonly maxLen: number | undefined,
  ) {}

  /** Starts writing this service's events, when the option asked for it (their consumers then make events). */
  start(events: QueueEvents): void {
    if (this.maxLen === undefined) return;
    this.subscription = events.stream$.subscribe((event) => this.add(event));
  }

  /**
   * Every process's events from `options.from` on, read with XREAD BLOCK on a connection of its
   * own, until unsubscribed or the service closes (then it completes).
   * @throws {InvalidOptionError} when `from` is not 'now', 'start' or a stream id.
   */
  watch(options: RedisAckQueueFleetEventsOptions = {}): Observable<RedisAckQueueFleetEvent> {
    const from = options.from ?? 'now';
    if (from !== 'now' && from !== 'start' && (typeof from !== 'string' || !STREAM_ID.test(from)))
      throw new InvalidOptionError('from', from, "'now', 'start' or a streamId of an earlier event");
    return new Observable((subscriber) => {
      const reader = this.stream.reader();
      let open = true;
      const handle = {
        close: () => {
          open = false;
          reader.close();
          subscriber.complete();
        },
      };
      this.readers.add(handle);
      void (async () => {
        let after = from === 'start' ? '0-0' : from;
        while (open) {
          try {
            if (after === 'now') after = await reader.newestId();
            for (const entry of await reader.read(after, BLOCK_MS, READ_COUNT)) {
              after = entry[0];
              subscriber.next(eventOf(entry));
            }
          } catch {
            // Redis away (or the reader closed): read again after a pause, from where it was.
            if (open) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
          }
        }
      })();
      return () => {
        open = false;
        this.readers.delete(handle);
        reader.close();
      };
    });
  }

  /** Completes every reader, stops writing and appends what is buffered. */
  async close(): Promise<void> {
    for (const reader of [...this.readers]) reader.close();
    this.readers.clear();
    this.subscription?.unsubscribe();
    await this.flush();
  }

  private add(event: RedisAckQueueEvent): void {
    if (this.buffer.length >= MAX_BUFFERED) this.buffer.shift();
    this.buffer.push(this.fieldsOf(event));
    if (this.buffer.length >= BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Appends the buffer in one pipeline; one flush at a time, so entries keep their order. */
  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(async () => {
      const batch = this.buffer.splice(0, BATCH);
      if (batch.length === 0) return;
      try {
        await this.stream.append(batch, this.maxLen ?? 1);
        this.failing = false;
      } catch (error) {
        if (!this.failing) this.logger.warn(MESSAGES.fleetEventsFailed(batch.length, errorSummary(error)));
        this.failing = true;
      }
      if (this.buffer.length > 0) this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
    });
    return this.flushing;
  }

  /** The fields kept: what identifies the message and what happened; never the event's error or values. */
  private fieldsOf(event: RedisAckQueueEvent): string[] {
    const fields = ['type', event.type, 'topic', event.topic, 'origin', this.origin];
    if (event.id !== undefined) fields.push('id', event.id);
    if (event.attempt !== undefined) fields.push('attempt', String(event.attempt));
    if (event.reason !== undefined) fields.push('reason', event.reason);
    if (event.onExpire !== undefined) fields.push('onExpire', event.onExpire);
    return fields;
  }
}

/** An entry as the public event: its time from its id (the server's clock when Redis stored it). */
function eventOf([streamId, pairs]: FleetEventEntry): RedisAckQueueFleetEvent {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < pairs.length; i += 2) fields.set(pairs[i], pairs[i + 1]);
  const event: RedisAckQueueFleetEvent = {
    type: fields.get('type') as RedisAckQueueEventType,
    topic: fields.get('topic') ?? '',
    at: Number(streamId.split('-')[0]),
    origin: fields.get('origin') ?? '',
    streamId,
  };
  const id = fields.get('id');
  if (id !== undefined) event.id = id;
  const attempt = fields.get('attempt');
  if (attempt !== undefined) event.attempt = Number(attempt);
  const reason = fields.get('reason');
  if (reason !== undefined) event.reason = reason as DeadLetterReason;
  const onExpire = fields.get('onExpire');
  if (onExpire !== undefined) event.onExpire = onExpire as RedisAckQueueOnExpire;
  return event;
}
