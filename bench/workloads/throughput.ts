import { drain, prefill } from '../measure';
import type { Figure, WorkloadContext } from './context';
import { withSystem } from './context';

const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);
const OWN_COMMANDS = new Set(['info', 'config|resetstat']);

/** Prefill N with batch pushes, then drain at concurrency 50; also counts Redis commands per message. */
export async function throughput(ctx: WorkloadContext): Promise<Figure[]> {
  const total = ctx.quick ? 2_000 : 50_000;
  const capMs = ctx.quick ? 20_000 : 120_000;
  return withSystem(ctx, 'throughput', async (system) => {
    await ctx.redis.admin.config('RESETSTAT');
    const pushCpu0 = await ctx.redis.cpuSeconds();
    const push = await prefill(system, total, 1_000, capMs);
    const pushCpu = (await ctx.redis.cpuSeconds()) - pushCpu0;
    const pushUsec = await ctx.redis.commandUsec();
    await ctx.redis.admin.config('RESETSTAT');
    const redisCpu0 = await ctx.redis.cpuSeconds();
    const nodeCpu0 = process.cpuUsage();
    const consume = await drain(system, total, 50, capMs);
    const nodeCpu = process.cpuUsage(nodeCpu0);
    const redisCpu = (await ctx.redis.cpuSeconds()) - redisCpu0;
    const calls = await ctx.redis.commandCalls();
    let all = 0;
    let scripts = 0;
    const rows: string[] = [];
    for (const [command, count] of [...calls].sort((a, b) => b[1] - a[1])) {
      if (OWN_COMMANDS.has(command)) continue;
      all += count;
      if (SCRIPT_COMMANDS.has(command)) scripts += count;
      rows.push(`| ${command} | ${(count / consume.count).toFixed(2)} |`);
    }
    ctx.details.push(
      `Redis commands per consumed message while draining ${consume.count.toLocaleString('en-US')} messages ` +
        `(INFO commandstats; commands run inside scripts count too):\n\n| command | calls per message |\n|---|---|\n${rows.join('\n')}`,
    );
    const n = total.toLocaleString('en-US');
    return [
      {
        id: 'push',
        label: `throughput: push/s (batches of 1,000, ${n} msgs)`,
        better: 'higher',
        value: push.rate,
        note: capNote(push.capped, capMs),
      },
      {
        id: 'push-cpu',
        label: 'Redis server CPU µs per pushed msg',
        better: 'lower',
        value: (pushCpu * 1e6) / push.count,
        digits: 1,
      },
      {
        id: 'push-usec',
        label: 'Redis µs in top-level commands per pushed msg (commandstats)',
        better: 'lower',
        value: topLevelUsec(pushUsec) / push.count,
        digits: 2,
      },
      {
        id: 'consume',
        label: `throughput: consume+ack/s (concurrency 50)`,
        better: 'higher',
        value: consume.rate,
        note: capNote(consume.capped, capMs),
      },
      {
        id: 'cmds',
        label: 'Redis commands per consumed msg (incl. inside scripts)',
        better: 'lower',
        value: all / consume.count,
        digits: 1,
      },
      {
        id: 'redis-cpu',
        label: 'Redis server CPU µs per consumed msg',
        better: 'lower',
        value: (redisCpu * 1e6) / consume.count,
        digits: 1,
      },
      {
        id: 'node-cpu',
        label: 'consumer process CPU µs per consumed msg',
        better: 'lower',
        value: (nodeCpu.user + nodeCpu.system) / consume.count,
        digits: 1,
      },
      {
        id: 'scripts',
        label: 'script calls (EVALSHA…) per consumed msg',
        better: 'lower',
        value: scripts / consume.count,
        digits: 2,
      },
    ];
  });
}

/**
 * Microseconds in the commands a client sent: a script's own figure already holds the commands it
 * ran, so those are left out, and so is the benchmark's INFO.
 */
function topLevelUsec(usec: Map<string, number>): number {
  const scripts = [...usec].filter(([command]) => SCRIPT_COMMANDS.has(command));
  if (scripts.length > 0) return scripts.reduce((sum, [, us]) => sum + us, 0);
  return [...usec].filter(([command]) => !OWN_COMMANDS.has(command)).reduce((sum, [, us]) => sum + us, 0);
}

export function capNote(capped: boolean, capMs: number): string | undefined {
  return capped ? `capped at ${capMs / 1000} s` : undefined;
}
