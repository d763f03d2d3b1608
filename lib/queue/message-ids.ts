import { randomBytes, randomInt } from 'node:crypto';
import { RedisCommandError } from '../errors';

/** Capital letters after the issued number: they end it (no digit or small letter), and they tell apart two services given one number. */
const MARK_LETTERS = 4;

/**
 * Message ids unique without per-message coordination, short because each is paid twice in Redis
 * (a hash field and a list entry): a number Redis issues once per service (INCR of the prefix's id
 * counter) in base 36, four random capital letters, then this service's counter in base 36, as in
 * `1gQZKB0`, `1gQZKB1`. The capitals end the number, so no two numbers and counters spell one id;
 * they also keep apart two services given one number (a failover that lost the INCR, a Redis that
 * came back empty while a service kept its number). When Redis refuses the INCR (an ACL, a
 * replica), the prefix is 12 random url-safe characters instead, the shape of earlier releases.
 * Ids are opaque: nothing reads this shape back.
 */
export class MessageIds {
  private prefix: string | undefined;
  private counter = 0;
  private issuing: Promise<void> | undefined;

  /** @param issue asks Redis for a number no other service of the prefix was given. */
  constructor(private readonly issue: () => Promise<number>) {}

  /**
   * Undefined once ids can be made; else a promise that settles when they can: the first push
   * waits for the INCR (one round trip per service). Redis unavailable rejects it (the push fails
   * as it would have, RedisUnavailableError) and the next push asks again.
   */
  ready(): Promise<void> | undefined {
    if (this.prefix !== undefined) return undefined;
    return (this.issuing ??= this.issue()
      .then(
        (issued) => this.start(issued.toString(36) + randomLetters()),
        (error: unknown) => {
          // Redis answered no (an ACL, a replica, a foreign key): the random prefix serves for good.
          if (!(error instanceof RedisCommandError)) throw error;
          this.start(randomBytes(9).toString('base64url'));
        },
      )
      .finally(() => (this.issuing = undefined)));
  }

  /** Asks Redis for a new number before the next id (after Redis lost this prefix's data). */
  renew(): void {
    this.prefix = undefined;
  }

  /** The next id; only after ready() settled. */
  next(): string {
    return this.prefix! + (this.counter++).toString(36);
  }

  private start(prefix: string): void {
    this.prefix = prefix;
    this.counter = 0;
  }
}

function randomLetters(): string {
  let letters = '';
  for (let i = 0; i < MARK_LETTERS; i++) letters += String.fromCharCode(65 + randomInt(26));
  return letters;
}
