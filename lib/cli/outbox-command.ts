import type { Command } from 'commander';
import type { OutboxDeadRow, OutboxStatus } from '../interfaces';
import { RedisAckQueueError } from '../errors';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import type { CliContext } from './cli-context';
import { CliFailure, EXIT } from './exit-codes';
import { printJson, printLine, printRecord, printTable, time } from './output';
import { integer, type CommandRunner } from './program-parts';

/** The options of `outbox` and its subcommands (those of `outbox` reach them through optsWithGlobals). */
interface OutboxCliOptions {
  outbox?: string;
  outboxTable?: string;
  limit?: number;
  all?: boolean;
}

/** The environment variable `--outbox` falls back to (a URL there stays out of `ps` and the shell's history). */
const URL_ENV = 'OUTBOX_URL';
const RELAY_COLUMNS = ['host', 'pid', 'redis', 'last error', 'relayed', 'lag ms', 'seen'];
const DEAD_COLUMNS = ['row', 'topic', 'message id', 'reason', 'dead at'];

/**
 * `outbox`: the transactional outbox's status (depth, oldest age, dead rows, relays), and
 * `outbox dead | requeue | purge` for its dead rows. Reads PostgreSQL only (`--outbox`, or the
 * env OUTBOX_URL) and runs no relay; the URL is never printed, in output or error.
 */
export function outboxCommand(program: Command, run: CommandRunner): void {
  const outbox = program
    .command('outbox')
    .description('the transactional outbox: rows waiting, the oldest one, dead rows and relays (PostgreSQL only)')
    .option('--outbox <postgres-url>', `the outbox's PostgreSQL URL (env ${URL_ENV})`)
    .option('--outbox-table <name>', "the outbox table's name (default redis_ack_queue_outbox)")
    .action(run(async (ctx) => withOutbox(ctx, (queue) => showStatus(ctx, queue))));
  outbox
    .command('dead')
    .description('list the dead rows, oldest first')
    .option('--limit <n>', 'rows to show (1 to 10000)', integer, 100)
    .action(run(async (ctx) => withOutbox(ctx, (queue, options) => showDead(ctx, queue, options.limit ?? 100))));
  for (const sweep of ['requeue', 'purge'] as const) {
    outbox
      .command(`${sweep} [rowIds...]`)
      .description(
        sweep === 'requeue'
          ? 'give dead rows back to the relay: the row ids given, or --all'
          : 'delete dead rows for good: the row ids given, or --all',
      )
      .option('--all', 'every dead row')
      .action(
        run(async (ctx, rowIds: string[]) =>
          withOutbox(ctx, (queue, options) => sweepDead(ctx, queue, sweep, rowIds, options.all === true)),
        ),
      );
  }
}

/** Runs `work` on the outbox's service; an error that quotes the URL (or its password) has it redacted. */
async function withOutbox(
  ctx: CliContext,
  work: (queue: RedisAckQueueService, options: OutboxCliOptions) => Promise<void>,
): Promise<void> {
  const options = ctx.options as unknown as OutboxCliOptions;
  const url = options.outbox ?? ctx.env[URL_ENV];
  if (url === undefined || url === '') {
    throw new CliFailure(`outbox: give the outbox's PostgreSQL URL with --outbox or the env ${URL_ENV}`, EXIT.usage);
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new CliFailure('outbox: --outbox takes a postgres:// or postgresql:// URL', EXIT.usage);
  }
  try {
    // The pool's connect is bounded as Redis' is: an unreachable host fails within --timeout.
    const queue = ctx.outboxQueue(
      { connectionString: url, connectionTimeoutMillis: ctx.options.timeout },
      options.outboxTable,
    );
    await work(queue, options);
  } catch (error) {
    throw redacted(error, url);
  }
}

/** The error with the URL and its password replaced, as a CliFailure of the same exit code. */
function redacted(error: unknown, url: string): unknown {
  const message = error instanceof Error ? error.message : String(error);
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // A URL that does not parse: only its whole text is replaced.
  }
  let safe = message.split(url).join('postgres://...');
  if (password !== '') safe = safe.split(password).join('***');
  if (safe === message) return error;
  const usage = error instanceof RedisAckQueueError && error.code === 'INVALID_OPTION';
  return new CliFailure(safe, usage ? EXIT.usage : EXIT.failure);
}

async function showStatus(ctx: CliContext, queue: RedisAckQueueService): Promise<void> {
  const status = await queue.outboxStatus();
  if (ctx.options.json) return printJson(ctx.io, status);
  printRecord(ctx.io, statusRecord(status));
  ctx.io.out('\n');
  printTable(
    ctx.io,
    status.relays.map((relay) => ({
      host: relay.host,
      pid: relay.pid,
      redis: relay.redisReachable ? 'reachable' : 'unreachable',
      'last error': relay.lastError,
      relayed: relay.relayed,
      'lag ms': relay.lagMs,
      seen: time(relay.seenAt),
    })),
    RELAY_COLUMNS,
    'No relay reported in the last 15 s.',
  );
}

function statusRecord(status: OutboxStatus): Record<string, unknown> {
  return {
    depth: status.depth,
    'oldest age ms': status.oldestAgeMs,
    dead: status.dead,
    relays: status.relays.length,
  };
}

async function showDead(ctx: CliContext, queue: RedisAckQueueService, limit: number): Promise<void> {
  const rows = await queue.outboxDead({ limit });
  if (ctx.options.json) return printJson(ctx.io, rows);
  printTable(ctx.io, rows.map(deadRecord), DEAD_COLUMNS, 'No dead row.');
}

function deadRecord(row: OutboxDeadRow): Record<string, unknown> {
  return {
    row: row.rowId,
    topic: row.topic,
    'message id': row.messageId === '' ? undefined : row.messageId,
    reason: row.reason,
    'dead at': time(row.deadAt),
  };
}

async function sweepDead(
  ctx: CliContext,
  queue: RedisAckQueueService,
  sweep: 'requeue' | 'purge',
  rowIds: string[],
  all: boolean,
): Promise<void> {
  if (all === rowIds.length > 0) throw new CliFailure(`outbox ${sweep}: give row ids or --all (not both)`, EXIT.usage);
  const count = all ? (await queue.outboxStatus()).dead : rowIds.length;
  const rows = `dead outbox row${count === 1 ? '' : 's'}`;
  const question =
    sweep === 'requeue'
      ? `Requeue ${count} ${rows} (the relay pushes them again)?`
      : `Purge ${count} ${rows} for good?`;
  if (!(await ctx.confirm(question))) return;
  const done =
    sweep === 'requeue'
      ? await queue.requeueOutboxDead(all ? undefined : rowIds)
      : await queue.purgeOutboxDead(all ? undefined : rowIds);
  if (ctx.options.json) return printJson(ctx.io, { [sweep === 'requeue' ? 'requeued' : 'purged']: done });
  printLine(ctx.io, `${sweep === 'requeue' ? 'Requeued' : 'Purged'} ${done} dead outbox row${done === 1 ? '' : 's'}.`);
}
