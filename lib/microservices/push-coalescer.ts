import {
  InvalidMessageIdError,
  InvalidOptionError,
  InvalidPayloadError,
  PayloadTooLargeError,
  type RedisAckQueueError,
} from '../errors';
import type { KeyedPushResult, PushManyItem } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';

/** Errors that one item of a batch caused by itself: the rest of the batch did nothing wrong. */
const ITEM_ERRORS: (abstract new (...args: never[]) => RedisAckQueueError)[] = [
  InvalidPayloadError,
  PayloadTooLargeError,
  InvalidOptionError,
  InvalidMessageIdError,
];

/** One caller's item and how its promise ends. */
interface Waiting {
  item: PushManyItem;
  resolve: (result: KeyedPushResult) => void;
  reject: (error: unknown) => void;
}

/**
 * The pushes of one transport client, coalesced: the pushes of one event-loop turn (the emits
 * and sends of many callers that run together) go to Redis as one `pushMany` per topic, one
 * script call instead of one each. Each caller's promise still resolves only once its message is
 * stored, with its own result, and rejects with the call's typed error if the call failed. An
 * item that is refused on its own account (a payload JSON cannot hold, a bad option) would fail
 * the whole call, which changes nothing: its batch is then pushed item by item, so only that
 * caller gets the error. Items keep their callers' order within a topic, and batches go out in
 * the order they were started.
 */
export class PushCoalescer {
  /** Items waiting for this turn's flush, by topic; and the service they go to. */
  private batches = new Map<string, Waiting[]>();
  private service: RedisAckQueueService | undefined;

  push(service: RedisAckQueueService, topic: string, item: PushManyItem): Promise<KeyedPushResult> {
    // A client that closed and connected again pushes with another service: what waits goes first.
    if (this.service !== service) this.flush();
    return new Promise((resolve, reject) => {
      if (this.batches.size === 0) {
        this.service = service;
        // setImmediate, not a microtask: a caller's push is several promise hops after its emit.
        setImmediate(() => this.flush());
      }
      const batch = this.batches.get(topic);
      if (batch) batch.push({ item, resolve, reject });
      else this.batches.set(topic, [{ item, resolve, reject }]);
    });
  }

  private flush(): void {
    const { batches, service } = this;
    if (!service || batches.size === 0) return;
    this.batches = new Map();
    for (const [topic, batch] of batches) void send(service, topic, batch);
  }
}

async function send(service: RedisAckQueueService, topic: string, batch: Waiting[]): Promise<void> {
  try {
    const results = await service.pushMany(
      topic,
      batch.map((each) => each.item),
    );
    for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
  } catch (error) {
    if (batch.length > 1 && ITEM_ERRORS.some((type) => error instanceof type)) {
      for (const each of batch) {
        service.pushMany(topic, [each.item]).then(([result]) => each.resolve(result), each.reject);
      }
    } else {
      for (const each of batch) each.reject(error);
    }
  }
}
