import { MESSAGES } from '../common/redis-ack-queue.messages';
import { keptValue } from './error-text';
import { RedisAckQueueError } from './redis-ack-queue.error';

/**
 * A topic name outside 1-200 characters of `A-Z a-z 0-9 . _ - :`, or a `prefix` outside
 * 1-100 of them.
 */
export class InvalidTopicError extends RedisAckQueueError {
  /** Always `INVALID_TOPIC`. */
  readonly code = 'INVALID_TOPIC';
  /** The rejected topic (or prefix); undefined when it was an object (see keptValue). */
  readonly topic: unknown;
  /**
   * @param topic - The rejected topic (or prefix), as given.
   * @param message - The error text; by default one that names the allowed characters.
   */
  constructor(topic: unknown, message = MESSAGES.invalidTopic(topic)) {
    super(message);
    this.topic = keptValue(topic);
  }
}

/** A message id that is not a non-empty string of at most 256 characters without unpaired UTF-16 surrogates. */
export class InvalidMessageIdError extends RedisAckQueueError {
  /** Always `INVALID_MESSAGE_ID`. */
  readonly code = 'INVALID_MESSAGE_ID';
  /** The rejected id; undefined when it was an object (see keptValue). */
  readonly id: unknown;
  /** @param id - The rejected id, as given. */
  constructor(id: unknown) {
    super(MESSAGES.invalidId(id));
    this.id = keptValue(id);
  }
}

/**
 * A node of `pushFlow` whose id is taken by a message that belongs to no node of this flow (the
 * same id pushed before, outside it), or a root (or a parent below it) stored before with other
 * children than given. Nothing of the flow runs: its nodes stored so far wait for a root that
 * never comes and are dropped within about an hour (a taken root: nothing was stored). Give that
 * node another id.
 */
export class FlowIdTakenError extends RedisAckQueueError {
  /** Always `FLOW_ID_TAKEN`. */
  readonly code = 'FLOW_ID_TAKEN';
  /**
   * @param topic - The node's topic.
   * @param id - The node's id.
   */
  constructor(
    readonly topic: string,
    readonly id: string,
  ) {
    super(MESSAGES.flowIdTaken(topic, id));
  }
}

/**
 * A payload that is `undefined`, or that holds `undefined`, a function, symbol, non-finite
 * number, Map, Set, BigInt or cycle (which JSON would drop, alter or refuse). The message says
 * the kind and depth of the value, never a key or a value of the payload.
 */
export class InvalidPayloadError extends RedisAckQueueError {
  /** Always `INVALID_PAYLOAD`. */
  readonly code = 'INVALID_PAYLOAD';
  /**
   * @param topic - The topic of the push.
   * @param message - The error text: what is wrong with the payload.
   * @param options - `cause`, when there is one.
   */
  constructor(
    readonly topic: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A payload whose JSON, with its headers' JSON, is larger than `maxPayloadBytes`. */
export class PayloadTooLargeError extends RedisAckQueueError {
  /** Always `PAYLOAD_TOO_LARGE`. */
  readonly code = 'PAYLOAD_TOO_LARGE';
  /**
   * @param topic - The topic of the push.
   * @param bytes - Size of the payload's JSON and its headers' JSON, in UTF-8 bytes.
   * @param limit - The `maxPayloadBytes` in force.
   */
  constructor(
    readonly topic: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(MESSAGES.payloadTooLarge(topic, bytes, limit));
  }
}

/**
 * An option with a value that makes no sense (negative delay, zero lease, ...), or a bad
 * argument (`items` that is not an array, a `handler` that is not a function, a `message`
 * that `reserve()` did not return).
 */
export class InvalidOptionError extends RedisAckQueueError {
  /** Always `INVALID_OPTION`. */
  readonly code = 'INVALID_OPTION';
  /**
   * The rejected value when it is a number, boolean or string of configuration; `undefined`
   * for an object or a function (which may hold payloads, headers or credentials) and for
   * user data (a push item, a message). The message then says only its kind.
   */
  readonly value: unknown;
  /**
   * @param option - Name of the option or argument, such as `leaseMs` or `deadLetters.maxCount`.
   * @param value - The rejected value, as given (kept only as `value` says).
   * @param expected - What would be accepted (said in the message).
   * @param userData - The value is the user's data (a push item, a message): never quoted or kept.
   */
  constructor(
    readonly option: string,
    value: unknown,
    expected: string,
    userData = false,
  ) {
    super(MESSAGES.invalidOption(option, value, expected, userData));
    this.value = userData ? undefined : keptValue(value);
  }
}

/**
 * A `connection` string (or CLI `--url` / `REDIS_URL`) of a scheme the library does not read
 * (`http:`), or a malformed one (`redis:/host`, one slash): refused when the service is built,
 * before any socket opens. The message names the scheme and the accepted forms, never the URL,
 * which may hold a password.
 */
export class InvalidConnectionUrlError extends InvalidOptionError {
  /** The scheme as written, lowered (`http:`); undefined when the string has none. */
  readonly scheme: string | undefined;
  /**
   * @param option - `connection`, or the option the string came from (`connection.cluster`).
   * @param scheme - The scheme, lowered (`http:`), when the string has one.
   * @param malformed - The scheme is one the library reads but the rest is not a URL of it.
   */
  constructor(option: string, scheme: string | undefined, malformed: boolean) {
    super(option, undefined, 'a connection URL', true);
    this.message = malformed ? MESSAGES.malformedConnectionUrl(scheme) : MESSAGES.unsupportedScheme(scheme ?? '');
    this.scheme = scheme;
  }
}
