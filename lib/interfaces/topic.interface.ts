/** Type-only key of a topic's payload type: no such property exists at runtime. */
declare const payloadType: unique symbol;

/**
 * A topic name that carries the type of its payloads (see `defineTopic`). At runtime it is
 * the plain string, so it goes wherever a topic name goes; at compile time `push`,
 * `pushMany`, `reserve`, `consume`, `deadLetters` and `@QueueHandler` check payloads
 * against `T`. A plain string is a `Topic` of any payload.
 */
export type Topic<T = unknown> = string & {
  /** Type-only brand carrying the payload type `T`: never set at runtime. */
  readonly [payloadType]?: T;
};

/** The payload type of a topic: `T` of a `Topic<T>`, `unknown` of a plain string. */
export type TopicPayload<K> = K extends {
  /** The brand `Topic<T>` carries. */
  readonly [payloadType]?: infer T;
}
  ? T
  : unknown;
