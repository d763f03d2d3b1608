import { InvalidOptionError } from '../errors';
import {
  type EncodedPush,
  KEYED_DEBOUNCED,
  KEYED_STORED,
  KEYED_SUPERSEDED,
  type KeyedReply,
} from '../engine/codecs/wire-format';
import type { KeyedPushResult, PushManyItem, PushOptions, Topic } from '../interfaces';
import { MessageIds } from './message-ids';
import { encodePushItem, sealItems } from './push-items';
import type { QueueCore } from './queue-core';
import { assertTopic, optionsOf } from './validation';

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
    return tracing ? tracing.push(topic, items, (traced) => this.store(topic, traced)) : this.store(topic, items);
  }

  private async store(topic: string, items: PushManyItem[]): Promise<KeyedPushResult[]> {
    const { engine, settings, events } = this.core;
    const stored = await this.core.call(
      'push',
      topic,
      async () => {
        assertTopic(topic);
        if (!Array.isArray(items)) throw new InvalidOptionError('items', items, 'an array of { payload, ...options }');
        const { compact } = engine.format;
        const sealing = this.core.codecs.writer(topic) !== undefined;
        const encoded = items.map((item) => encodePushItem(topic, item, settings.maxPayloadBytes, compact, 0, sealing));
        // Nothing to push writes nothing: not even the topic's registration.
        if (encoded.length === 0) return { encoded, flags: [] as boolean[], keyed: undefined };
        const sealed = sealing ? sealItems(this.core.codecs, topic, encoded) : undefined;
        if (sealed) await sealed;
        await this.assignIds(encoded);
        // The first push of this service to the topic registers it first (see TopicRegistry).
        const noted = engine.topics.note(topic);
        if (encoded.some((item) => item.keyed)) {
          if (noted) await noted;
          return { encoded, ...(await this.storeKeyed(topic, encoded)) };
        }
        const flags = await (noted ? noted.then(() => engine.push(topic, encoded)) : engine.push(topic, encoded));
        return { encoded, flags, keyed: undefined };
      },
      settings.replicatedPushes?.timeoutMs,
    );
    let count = 0;
    const results = stored.encoded.map(({ id }, i): KeyedPushResult => {
      const keyed = stored.keyed?.[i];
      if (keyed) return this.keyedResult(topic, keyed);
      if (!stored.flags[i]) return { id, duplicate: true };
      count += 1;
      events.emit({ type: 'pushed', topic, id });
      return { id, duplicate: false };
    });
    events.tally.pushed(topic, count);
    return results;
  }

  /** Plain items through push.lua, those with a key mode through push-keyed.lua, at once. */
  private async storeKeyed(
    topic: string,
    encoded: EncodedPush[],
  ): Promise<{ flags: boolean[]; keyed: (KeyedReply | undefined)[] }> {
    const { engine } = this.core;
    const plain = encoded.filter((item) => !item.keyed);
    const keyedItems = encoded.filter((item) => item.keyed);
    const [plainFlags, replies] = await Promise.all([
      plain.length > 0 ? engine.push(topic, plain) : Promise.resolve([]),
      engine.pushKeyed(topic, keyedItems),
    ]);
    let p = 0;
    let k = 0;
    const flags = encoded.map((item) => (item.keyed ? false : plainFlags[p++]));
    const keyed = encoded.map((item) => (item.keyed ? replies[k++] : undefined));
    return { flags, keyed };
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
