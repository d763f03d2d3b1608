import type { Command } from 'commander';
import type { ScalingReport, ScalingTarget } from '../interfaces';
import type { CliContext } from './cli-context';
import { CliFailure, EXIT } from './exit-codes';
import { printJson, printRecord } from './output';
import { integer, type CommandRunner } from './program-parts';

/** The options of `scaling`, as commander gives them (numbers parsed). */
interface ScalingOptions {
  targetWait?: number;
  minConsumers?: number;
  maxConsumers?: number;
  concurrency?: number;
  cooldown?: number;
  remove?: boolean;
}

/**
 * `scaling <topic>`: the topic's scaling signal (one read, which moves its smoothing on as any
 * read does); with `--target-wait` sets its target first, with `--remove` removes it.
 */
export function scalingCommand(program: Command, run: CommandRunner): void {
  program
    .command('scaling <topic>')
    .description('the consumers a topic needs for its scaling target; set it with --target-wait, drop it with --remove')
    .option('--target-wait <ms>', 'set the target: the wait a message should not exceed (ms)', integer)
    .option('--min-consumers <n>', 'with --target-wait: the least answered (default 0)', integer)
    .option('--max-consumers <n>', 'with --target-wait: the most answered (default 1000)', integer)
    .option('--concurrency <n>', "with --target-wait: each consumer's concurrency (default 1)", integer)
    .option('--cooldown <ms>', 'with --target-wait: how long lower before it comes down (default 30000)', integer)
    .option('--remove', "remove the topic's scaling target")
    .action(run(async (ctx, topic: string, options: ScalingOptions) => scaling(ctx, topic, options)));
}

async function scaling(ctx: CliContext, topic: string, options: ScalingOptions): Promise<void> {
  const target = targetOf(options);
  const report = await ctx.onTopic(topic, async (queue) => {
    if (options.remove) {
      await queue.setScalingTarget(topic, null);
      return null;
    }
    if (target) await queue.setScalingTarget(topic, target);
    return queue.scaling(topic);
  });
  if (options.remove) {
    if (ctx.options.json) return printJson(ctx.io, { topic, removed: true });
    return void ctx.io.out('Scaling target removed.\n');
  }
  if (!report) {
    throw new CliFailure(`the topic has no scaling target (set one with --target-wait <ms>)`, EXIT.notFound);
  }
  if (ctx.options.json) return printJson(ctx.io, report);
  printRecord(ctx.io, rowOf(report));
}

/** The target the options set; undefined without --target-wait (a bound alone is a usage error). */
function targetOf(options: ScalingOptions): ScalingTarget | undefined {
  const { targetWait, minConsumers, maxConsumers, concurrency, cooldown, remove } = options;
  const bounds = [minConsumers, maxConsumers, concurrency, cooldown].some((n) => n !== undefined);
  if (remove && (targetWait !== undefined || bounds)) {
    throw new CliFailure('--remove takes no other scaling option', EXIT.usage);
  }
  if (targetWait === undefined) {
    if (bounds)
      throw new CliFailure(
        '--min-consumers, --max-consumers, --concurrency and --cooldown need --target-wait',
        EXIT.usage,
      );
    return undefined;
  }
  return {
    targetWaitMs: targetWait,
    ...(minConsumers !== undefined && { minConsumers }),
    ...(maxConsumers !== undefined && { maxConsumers }),
    ...(concurrency !== undefined && { concurrency }),
    ...(cooldown !== undefined && { cooldownMs: cooldown }),
  };
}

function rowOf(report: ScalingReport): Record<string, unknown> {
  return {
    topic: report.topic,
    'desired consumers': report.desiredConsumers,
    'computed now': report.computedConsumers,
    'arrival/s': report.arrivalPerSecond,
    'handling ms': report.handlingMs,
    backlog: report.backlog,
    'target wait ms': report.targetWaitMs,
    'min..max': `${report.minConsumers}..${report.maxConsumers}`,
    concurrency: report.concurrency,
    'cooldown ms': report.cooldownMs,
  };
}
