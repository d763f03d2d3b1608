/** Base class of every error this library throws; `code` is stable for programs to match on. */
export abstract class RedisAckQueueError extends Error {
  /** The kind of error (`INVALID_TOPIC`, `REDIS_UNAVAILABLE`, ...): match on it, not on the message. */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
