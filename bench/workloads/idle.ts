import { now, sleep } from '../adapter';
import type { Figure, WorkloadContext } from './context';
import { withSystem } from './context';

/** One consumer on an empty queue: Redis commands per second and this process's CPU. */
export async function idle(ctx: WorkloadContext): Promise<Figure[]> {
  const seconds = ctx.quick ? 1 : 10;
  return withSystem(ctx, 'idle', async (system) => {
    const consumer = await system.startConsumer(10, () => undefined);
    await sleep(1_000);
    const commands0 = await ctx.redis.info('stats', 'total_commands_processed');
    const cpu0 = process.cpuUsage();
    const t0 = now();
    await sleep(seconds * 1_000);
    const cpu = process.cpuUsage(cpu0);
    const elapsed = (now() - t0) / 1_000;
    // The first INFO is counted once it has run; the second is not counted yet.
    const commands = (await ctx.redis.info('stats', 'total_commands_processed')) - commands0 - 1;
    await consumer.stop();
    return [
      {
        id: 'idle-cmds',
        label: `idle (${seconds} s, 1 consumer): Redis commands/s`,
        better: 'lower',
        value: commands / elapsed,
        digits: 2,
      },
      {
        id: 'idle-cpu',
        label: 'idle: consumer CPU ms per s',
        better: 'lower',
        value: (cpu.user + cpu.system) / 1_000 / elapsed,
        digits: 2,
      },
    ];
  });
}
