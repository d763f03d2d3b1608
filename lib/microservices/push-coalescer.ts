import { TurnBatches } from '../common/turn-batches';
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
 * caller gets the error. Items keep their callers' order within a topic.
 */
export class PushCoalescer {
  private readonly batches = new TurnBatches<Waiting>((topic, batch) => void this.send(topic, batch));
  /** The service this turn's items go to. */
  private service: RedisAckQueueService | undefined;

  push(service: RedisAckQueueService, topic: string, item: PushManyItem): Promise<KeyedPushResult> {
    // A client that closed and connected again pushes with another service: what waits goes first.
    if (this.service !== service) this.batches.flush();
    this.service = service;
    return new Promise((resolve, reject) => this.batches.add(topic, { item, resolve, reject }));
  }

  private async send(topic: string, batch: Waiting[]): Promise<void> {
    const service = this.service!;
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
}
