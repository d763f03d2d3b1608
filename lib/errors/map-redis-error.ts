import { MESSAGES } from '../common/redis-ack-queue.messages';
import { InvalidOptionError } from './input.errors';
import { RedisAckQueueError } from './redis-ack-queue.error';
import { QueueKeyTypeError, RedisCommandError, RedisUnavailableError } from './redis.errors';

const WRONGTYPE_FROM_SCRIPT = /ACKQ_WRONGTYPE (\S+) (\S+) (\S+)/;
/** push.lua's refusal of a deadline that does not lie after its message's due time (server clock). */
const DEADLINE_FROM_SCRIPT = /ACKQ_DEADLINE \d+ (startBy|expiresInMs)/;

/** ioredis' ways of saying that no connection could carry the command. */
const UNAVAILABLE =
  /^(Connection is closed|Stream isn't writeable|Cluster isn't ready|None of startup nodes|Failed to refresh slots|Reached the max retries|All sentinels are unreachable)/;

/**
 * The one place where Redis replies become typed errors. Script codes come first; any
 * other Redis error keeps its first word (OOM, READONLY, NOPERM...) as `redisCode`, and a
 * command that found no connection becomes RedisUnavailableError. The cause kept is a
 * redacted copy: ioredis' error holds the command's arguments (payloads, an AUTH password).
 */
export function mapRedisError(error: unknown, operation: string, topic?: string): Error {
  if (error instanceof RedisAckQueueError) return error;
  if (!(error instanceof Error)) return new RedisUnavailableError(operation, topic, String(error));
  const scripted = WRONGTYPE_FROM_SCRIPT.exec(error.message);
  if (scripted) return new QueueKeyTypeError(scripted[1], scripted[2], scripted[3]);
  const deadline = DEADLINE_FROM_SCRIPT.exec(error.message);
  if (deadline) {
    const refused = new InvalidOptionError(deadline[1], undefined, 'a deadline after its due time', true);
    refused.message = MESSAGES.deadlineNotAhead(deadline[1]);
    return refused;
  }
  if (error.name !== 'ReplyError') {
    const reason = error.message.split('\n')[0];
    return new RedisUnavailableError(operation, topic, reason, { cause: redactedCause(error) });
  }
  // Scripts prefix errors of the commands they call; keep the command's own reply.
  const reply = error.message.replace(/^ERR Error running script[^:]*: @user_script:\d+: /, '');
  const redisCode = /^[A-Z]+/.exec(reply)?.[0] ?? 'ERR';
  return new RedisCommandError(operation, topic, redisCode, reply.replace(/ script: \w+, on @user_script:\d+\.$/, ''), {
    cause: redactedCause(error),
  });
}

/** Whether ioredis failed for want of a connection (not a reply Redis gave). */
export function isUnavailable(error: unknown): boolean {
  return error instanceof Error && error.name !== 'ReplyError' && UNAVAILABLE.test(error.message);
}

/**
 * A copy of an ioredis error that keeps its name, message, stack, `code` and the command's
 * name, and drops everything else: the command's arguments, the connection's options.
 */
export function redactedCause(error: unknown): Error | undefined {
  if (!(error instanceof Error)) return undefined;
  const copy = new Error(error.message);
  copy.name = error.name;
  copy.stack = error.stack;
  const { code, command } = error as { code?: unknown; command?: { name?: unknown } };
  if (typeof code === 'string') Object.assign(copy, { code });
  if (typeof command?.name === 'string') Object.assign(copy, { command: { name: command.name } });
  return copy;
}
