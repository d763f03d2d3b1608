import { InvalidOptionError } from '../errors';
import {
  type EncodedPush,
  KEYED_DEBOUNCED,
  KEYED_RELAYED,
  KEYED_STORED,
  KEYED_SUPERSEDED,
  type KeyedReply,
  PUSH_RELAYED,
} from '../engine/codecs/wire-format';
import type { KeyedPushResult, PushManyItem, PushOptions, Topic } from '../interfaces';
import { MessageIds } from './message-ids';
import { encodePushItem, sealItems } from './push-items';
import type { QueueCore } from './queue-core';
import { assertReceipts, assertTopic, optionsOf } from './validation';

/** What the outbox relay's push did with one row (see QueueProducer.pushRelayed). Internal. */
export interface RelayedPush {
  /** As pushMany answers, or 'relayed-before': the row's receipt was held, nothing was done. */
  result: KeyedPushResult | 'relayed-before';
  /** The partition its receipt is in (recorded or held): what forgetReceipts is given. */
  partition: number;
}

/** Pushing messages (see RedisAckQueueProducerApi): a part of RedisAckQueueService. */
export class QueueProducer {
  private readonly ids: MessageIds;

  constructor(private readonly core: QueueCore) {
    this.ids = new MessageIds(() => core.engine.issueIdPrefix());
  }

  async push<T>(topic: Topic<T>, payload: T, options?: PushOptions | null): Promise<KeyedPushResult> {
    const [result] = await this.pushMany(topic, [{ ...optionsOf(options), payload }]);
    return result;
  }

  pushMany<T>(topic: Topic<T>, items: PushManyItem<T>[]): Promise<KeyedPushResult[]> {
    const { tracing } = this.core;
    const store = async (own: PushManyItem[]) => (await this.store(topic, own, undefined)).results as KeyedPushResult[];
    return tracing ? tracing.push(topic, items, store) : store(items);
  }

  /**
   * pushMany for the outbox relay: each item carries its row's receipt (`receipts[i]`), which
   * Redis records atomically with its push, in its partition; an item whose receipt is held
   * already is not pushed ('relayed-before') and changes nothing. Items are stored in order as
   * pushMany stores them; events and tallies count the stored ones only. Internal.
   */
  async pushRelayed(topic: string, items: PushManyItem[], receipts: string[]): Promise<RelayedPush[]> {
    const { tracing } = this.core;
    const store = (own: PushManyItem[]) => this.store(topic, own, receipts);
    const { encoded, results } = await (tracing ? tracing.push(topic, items, store) : store(items));
    const { engine } = this.core;
    return results.map((result, i) => ({ result, partition: engine.partitionOfPush(topic, encoded[i]) }));
  }

  /** Forgets receipts of one partition, after the relay's database commit (receipts-forget.lua). Internal. */
  async forgetReceipts(topic: string, partition: number, receipts: string[]): Promise<void> {
    await this.core.call('forget relay receipts', topic, () => {
      assertTopic(topic);
      assertReceipts(receipts, Array.isArray(receipts) ? receipts.length : -1);
      const count = this.core.engine.partitionCount(topic);
      if (!Number.isInteger(partition) || partition < 0 || partition >= count)
        throw new InvalidOptionError('partition', partition, `an integer from 0 to ${count - 1}`);
      return this.core.engine.receipts.forget(topic, partition, receipts);
    });
  }

  private async store(
    topic: string,
    items: PushManyItem[],
    receipts: string[] | undefined,
  ): Promise<{ encoded: EncodedPush[]; results: (KeyedPushResult | 'relayed-before')[] }> {
    const { engine, settings, events } = this.core;
    const stored = await this.core.call(
      'push',
      topic,
      async () => {
        assertTopic(topic);
        if (!Array.isArray(items)) throw new InvalidOptionError('items', items, 'an array of { payload, ...options }');
        if (receipts !== undefined) assertReceipts(receipts, items.length);
        const { compact } = engine.format;
        const sealing = this.core.codecs.writer(topic) !== undefined;
        const encoded = items.map((item) => encodePushItem(topic, item, settings.maxPayloadBytes, compact, 0, sealing));
        // Nothing to push writes nothing: not even the topic's registration.
        if (encoded.length === 0) return { encoded, codes: [] as number[], keyed: undefined };
        if (receipts !== undefined) encoded.forEach((item, i) => (item.receipt = receipts[i]));
        const sealed = sealing ? sealItems(this.core.codecs, topic, encoded) : undefined;
        if (sealed) await sealed;
        await this.assignIds(encoded);
        // The first push of this service to the topic registers it first (see TopicRegistry).
        const noted = engine.topics.note(topic);
        if (encoded.some((item) => item.keyed)) {
          if (noted) await noted;
          return { encoded, ...(await this.storeKeyed(topic, encoded)) };
        }
        const codes = await (noted
          ? noted.then(() => engine.pushCodes(topic, encoded))
          : engine.pushCodes(topic, encoded));
        return { encoded, codes, keyed: undefined };
      },
      settings.replicatedPushes?.timeoutMs,
    );
    let count = 0;
    const results = stored.encoded.map(({ id }, i): KeyedPushResult | 'relayed-before' => {
      const keyed = stored.keyed?.[i];
      if (keyed) return keyed.code === KEYED_RELAYED ? 'relayed-before' : this.keyedResult(topic, keyed);
      const code = stored.codes[i];
      if (code === PUSH_RELAYED) return 'relayed-before';
      if (code !== 1) return { id, duplicate: true };
      count += 1;
      events.emit({ type: 'pushed', topic, id });
      return { id, duplicate: false };
    });
    events.tally.pushed(topic, count);
    return { encoded: stored.encoded, results };
  }

  /** Plain items through push.lua, those with a key mode through push-keyed.lua, at once. */
  private async storeKeyed(
    topic: string,
    encoded: EncodedPush[],
  ): Promise<{ codes: number[]; keyed: (KeyedReply | undefined)[] }> {
    const { engine } = this.core;
    const plain = encoded.filter((item) => !item.keyed);
    const keyedItems = encoded.filter((item) => item.keyed);
    const [plainCodes, replies] = await Promise.all([
      plain.length > 0 ? engine.pushCodes(topic, plain) : Promise.resolve([]),
      engine.pushKeyed(topic, keyedItems),
    ]);
    let p = 0;
    let k = 0;
    const codes = encoded.map((item) => (item.keyed ? 0 : plainCodes[p++]));
    const keyed = encoded.map((item) => (item.keyed ? replies[k++] : undefined));
    return { codes, keyed };
  }

  /** A keyed push's answer; a new message is pushed, a superseded one cancelled, as events say. */
  private keyedResult(topic: string, { code, id, cancelled }: KeyedReply): KeyedPushResult {
    const { events } = this.core;
    if (cancelled !== '') {
      events.emit({ type: 'cancelled', topic, id: cancelled });
      events.tally.cancelled(topic, 1);
    }
    if (code === KEYED_DEBOUNCED) return { id, debounced: true };
    if (code === KEYED_SUPERSEDED) return { id, superseded: true };
    if (code !== KEYED_STORED) return { id, duplicate: true };
    events.emit({ type: 'pushed', topic, id });
    events.tally.pushed(topic, 1);
    return { id, duplicate: false };
  }

  /** Gives each item without an id ('') a new one. */
  async assignIds(items: { id: string }[]): Promise<void> {
    // This service's first push asks Redis for the number its ids start with.
    const idsReady = this.ids.ready();
    if (idsReady) await idsReady;
    for (const item of items) if (item.id === '') item.id = this.ids.next();
  }

  /** Redis lost this prefix's data: the next ids start from a number issued again. */
  renewIds(): void {
    this.ids.renew();
  }

  async checkTopic(topic: string): Promise<void> {
    await this.core.call('check a topic', topic, () => {
      assertTopic(topic);
      return this.core.engine.checkTopic(topic);
    });
  }
}
