import { MESSAGES } from '../common/redis-ack-queue.messages';
import { RedisAckQueueError } from './redis-ack-queue.error';

/**
 * `startTestRedis()` found no server binary: neither the `binary` option, `REDIS_SERVER_BIN`,
 * `redis-server` nor `valkey-server` on the PATH. Exported by `nestjs-redis-ack-queue/testing`.
 */
export class RedisServerNotFoundError extends RedisAckQueueError {
  /** Always `REDIS_SERVER_NOT_FOUND`. */
  readonly code = 'REDIS_SERVER_NOT_FOUND';
  /** @param looked - What was looked for, in order (paths, or names on the PATH). */
  constructor(readonly looked: readonly string[]) {
    super(MESSAGES.testRedisNotFound([...looked]));
  }
}

/**
 * The test Redis server started by `startTestRedis()` exited or did not answer in time; the
 * message ends with the last lines of its log. Exported by `nestjs-redis-ack-queue/testing`.
 */
export class TestRedisStartError extends RedisAckQueueError {
  /** Always `TEST_REDIS_START_FAILED`. */
  readonly code = 'TEST_REDIS_START_FAILED';
  /**
   * @param binary - The server binary that was run.
   * @param port - The port it was to listen on.
   * @param reason - What went wrong.
   * @param logTail - The last lines of its log and error output (may be empty).
   */
  constructor(
    readonly binary: string,
    readonly port: number,
    reason: string,
    readonly logTail: string,
  ) {
    super(MESSAGES.testRedisStartFailed(binary, port, reason, logTail));
  }
}
