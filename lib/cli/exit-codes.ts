import { CommanderError } from 'commander';
import { RedisAckQueueError } from '../errors';
import { inert } from './output';

/** The CLI's exit codes (documented in the README's "Command line" section). */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** A runtime failure: Redis unavailable, a refused command, a foreign key type... */
  failure: 1,
  /** A usage error: bad arguments or options, a destructive command without --yes off a terminal. */
  usage: 2,
  /** Not found: `get` of a missing id, `cancel` of a message that is not there. */
  notFound: 3,
} as const;

/** A failure the CLI reports as one line on stderr, then exits with `exitCode`. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Library errors that mean the arguments were wrong (a bad topic, id or option), not Redis. */
const USAGE_CODES = new Set(['INVALID_TOPIC', 'INVALID_MESSAGE_ID', 'INVALID_OPTION', 'INVALID_SCHEDULE']);

/** Commander ends --help and --version by throwing too: those are successes (help shown for no command is not). */
const COMMANDER_SUCCESS = new Set(['commander.helpDisplayed', 'commander.version']);

/**
 * The exit code of an error, and the line to print (undefined when commander printed it
 * already). Only the message: never a stack, a payload or a credential (library messages
 * name Redis targets without them).
 */
export function failureOf(error: unknown): { exitCode: number; line?: string } {
  if (error instanceof CommanderError) {
    return { exitCode: COMMANDER_SUCCESS.has(error.code) || error.exitCode === 0 ? EXIT.ok : EXIT.usage };
  }
  if (error instanceof CliFailure) return { exitCode: error.exitCode, line: oneLine(error.message) };
  if (error instanceof RedisAckQueueError) {
    return { exitCode: USAGE_CODES.has(error.code) ? EXIT.usage : EXIT.failure, line: oneLine(error.message) };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: EXIT.failure, line: oneLine(message) };
}

function oneLine(text: string): string {
  return `redis-ack-queue: ${inert(text.replace(/\s*\n\s*/g, ' '))}`;
}
