import { describeSealed, isSealed, openText, sealText } from '../codecs/sealed-text';
import type { Settling } from '../codecs/settling';
import type { TextResealer } from '../engine/codecs/reseal-format';
import { InvalidOptionError } from '../errors';
import type { Codec, RedisAckQueueOptions } from '../interfaces';
import { assertTopic, isPlainObject } from './validation';

/**
 * The codecs of a service's topics (options `codec` and `topicCodecs`), and the one place that
 * seals values for them and opens sealed ones (see docs/codecs.md). A topic's new values are
 * written with its writer; a sealed value is read with its topic's codec, else the service's, so
 * a topic switched to `null` still reads what was sealed before.
 */
export class ValueCodecs {
  private constructor(
    private readonly codec: Codec | undefined,
    private readonly topics: ReadonlyMap<string, Codec | null>,
  ) {}

  /** Checks `codec` and `topicCodecs` (a typed error, nothing kept, on a bad one). */
  static of(options: Pick<RedisAckQueueOptions, 'codec' | 'topicCodecs'>): ValueCodecs {
    const { codec, topicCodecs } = options;
    if (codec !== undefined) assertCodec('codec', codec);
    const topics = new Map<string, Codec | null>();
    if (topicCodecs !== undefined) {
      if (!isPlainObject(topicCodecs))
        throw new InvalidOptionError('topicCodecs', topicCodecs, 'an object of codecs (or null) by topic name');
      for (const [topic, each] of Object.entries(topicCodecs)) {
        assertTopic(topic);
        if (each !== null) assertCodec(`topicCodecs.${topic}`, each);
        topics.set(topic, each);
      }
    }
    return new ValueCodecs(codec, topics);
  }

  /** Whether any topic has a codec: without one, no value is ever sealed here. */
  get any(): boolean {
    return this.codec !== undefined || [...this.topics.values()].some((codec) => codec !== null);
  }

  /** The codec `topic`'s new values are sealed with; undefined: written as JSON. */
  writer(topic: string): Codec | undefined {
    const own = this.topics.get(topic);
    return own === undefined ? this.codec : (own ?? undefined);
  }

  /** The codec that reads `topic`'s sealed values. */
  reader(topic: string): Codec | undefined {
    return this.topics.get(topic) ?? this.codec;
  }

  /** JSON text as `topic` stores it: sealed by its writer, or as it is without one. */
  seal(topic: string, json: string): Settling<string> {
    const codec = this.writer(topic);
    return codec ? sealText(codec, json) : json;
  }

  /**
   * What seals `topic`'s stored texts again under its writer (reencrypt), when the writer seals
   * under `requires` (its key id, '' for a codec without one); undefined without such a writer.
   * A text already under that key is left (undefined); a sealed one that cannot be opened throws
   * a PayloadDecodeError; a plain one is sealed.
   */
  resealer(topic: string, requires: string): TextResealer | undefined {
    const writer = this.writer(topic);
    if (!writer || (writer.keyId ?? '') !== requires) return undefined;
    return async (text) => {
      if (isSealed(text) && writer.keyId !== undefined && describeSealed(text).keyId === writer.keyId) return undefined;
      const sealed = await sealText(writer, await this.open(topic, text));
      return sealed === text ? undefined : sealed;
    };
  }

  /**
   * The JSON text of a stored value of `topic`: opened when sealed (a PayloadDecodeError when it
   * cannot be), else as it is.
   */
  open(topic: string, stored: string): Settling<string> {
    return isSealed(stored) ? openText(topic, this.reader(topic), stored) : stored;
  }
}

/** A process without codecs: it writes JSON and refuses to open sealed values ('no-codec'). */
export const NO_CODECS = ValueCodecs.of({});

function assertCodec(option: string, codec: unknown): void {
  const { encode, decode } = (codec ?? {}) as Partial<Codec>;
  if (typeof encode !== 'function' || typeof decode !== 'function')
    throw new InvalidOptionError(option, undefined, 'a codec { encode(bytes), decode(bytes) }', true);
}
