import { Logger } from '@nestjs/common';
import type { RedisAckQueueLogLevel } from '../interfaces';

/** How chatty each `logLevel` is: a line is written when its level ranks at or below the option's. */
export const LOG_LEVEL_RANKS: Readonly<Record<RedisAckQueueLogLevel, number>> = {
  silent: 0,
  error: 1,
  warn: 2,
  log: 3,
};

/**
 * The library's log: Nest's Logger under the context `RedisAckQueue` (so the app's logger
 * and its own level settings apply too), cut at the `logLevel` option. Callers pass texts
 * from the messages file, which name topics, ids and errors, never payloads.
 */
export class QueueLogger {
  private readonly logger = new Logger('RedisAckQueue');
  private readonly rank: number;

  constructor(level: RedisAckQueueLogLevel) {
    this.rank = LOG_LEVEL_RANKS[level];
  }

  error(message: string): void {
    if (this.rank >= LOG_LEVEL_RANKS.error) this.logger.error(message);
  }

  warn(message: string): void {
    if (this.rank >= LOG_LEVEL_RANKS.warn) this.logger.warn(message);
  }

  log(message: string): void {
    if (this.rank >= LOG_LEVEL_RANKS.log) this.logger.log(message);
  }

  /**
   * A line said once per service at startup (which Redis it reached): written at Nest's `log`
   * level, yet cut as a warning, so the default `logLevel` ('warn') and a default Nest app show
   * it; 'error' and 'silent' hide it.
   */
  startup(message: string): void {
    if (this.rank >= LOG_LEVEL_RANKS.warn) this.logger.log(message);
  }
}
