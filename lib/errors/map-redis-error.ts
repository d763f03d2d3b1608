import { RedisAckQueueError } from './redis-ack-queue.error';
import { QueueKeyTypeError, RedisCommandError } from './redis.errors';

const WRONGTYPE_FROM_SCRIPT = /ACKQ_WRONGTYPE (\S+) (\S+) (\S+)/;

/**
 * The one place where Redis replies become typed errors. Script codes come first;
 * any other Redis error keeps its first word (OOM, READONLY, NOPERM...) as `redisCode`.
 */
export function mapRedisError(error: unknown, operation: string, topic?: string): Error {
  if (error instanceof RedisAckQueueError || !(error instanceof Error)) return error as Error;
  const scripted = WRONGTYPE_FROM_SCRIPT.exec(error.message);
  if (scripted) return new QueueKeyTypeError(scripted[1], scripted[2], scripted[3]);
  if (error.name !== 'ReplyError') return error;
  // Scripts prefix errors of the commands they call; keep the command's own reply.
  const reply = error.message.replace(/^ERR Error running script[^:]*: @user_script:\d+: /, '');
  const redisCode = /^[A-Z]+/.exec(reply)?.[0] ?? 'ERR';
  return new RedisCommandError(operation, topic, redisCode, reply.replace(/ script: \w+, on @user_script:\d+\.$/, ''), {
    cause: error,
  });
}
