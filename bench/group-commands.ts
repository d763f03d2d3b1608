// Redis commands per grouped message over its life (push, reserve, ack), counted by the server
// (INFO commandstats, commands run inside scripts included), so the figure does not depend on the
// machine's speed, and apart for the push and the consume: GROUPS groups x PER_GROUP messages pushed
// in batches of 1,000, then consumed at concurrency 50. With --weights the groups get weights 1-5
// first (setGroupWeights), if the build has them. With --quota every group gets a quota that never
// binds ({ max: 1,000,000, perMs: 60,000 }: its bookkeeping only), --quota=handler adds a handler-time
// budget (handlerMs) to it.
// Run: npm run bench:group-commands [-- --groups=1000 --per-group=20 --weights --quota[=handler]]
import { RedisAckQueueService } from '../lib/service/redis-ack-queue.service';
import { BenchRedis } from './redis-server';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const GROUPS = arg('groups', 1_000);
const PER_GROUP = arg('per-group', 20);
const WEIGHTS = process.argv.includes('--weights');
const QUOTA_ARG = process.argv.find((a) => a === '--quota' || a.startsWith('--quota='));
/** 'rate' (--quota), 'handler' (--quota=handler) or undefined. */
const QUOTA = QUOTA_ARG && (QUOTA_ARG.split('=')[1] ?? 'rate');
const TOTAL = GROUPS * PER_GROUP;

/** Calls per command since the last CONFIG RESETSTAT, the admin's own left out. */
async function commandCounts(redis: BenchRedis): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const text = await redis.admin.info('commandstats');
  for (const [, name, calls] of text.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
    if (!['info', 'config|resetstat'].includes(name)) counts.set(name, Number(calls));
  }
  return counts;
}

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const queue = new RedisAckQueueService({ connection: redis.url, logLevel: 'error' });
  await queue.connect();
  const topic = 'bench.group-commands';
  if (WEIGHTS) {
    const weights = Object.fromEntries(Array.from({ length: GROUPS }, (_, g) => [`g${g}`, 1 + (g % 5)]));
    await (queue as unknown as { setGroupWeights(t: string, w: object): Promise<void> }).setGroupWeights(
      topic,
      weights,
    );
  }
  if (QUOTA) {
    const quota = { max: 1_000_000, perMs: 60_000, ...(QUOTA === 'handler' ? { handlerMs: 86_400_000_000 } : {}) };
    await queue.setGroupQuotas(topic, { default: quota });
  }
  await redis.admin.config('RESETSTAT');
  let batch: { payload: number; group: string }[] = [];
  for (let seq = 0; seq < PER_GROUP; seq++) {
    for (let g = 0; g < GROUPS; g++) {
      batch.push({ payload: seq, group: `g${g}` });
      if (batch.length === 1000) {
        await queue.pushMany(topic, batch);
        batch = [];
      }
    }
  }
  if (batch.length > 0) await queue.pushMany(topic, batch);
  const pushed = [...(await commandCounts(redis)).values()].reduce((sum, n) => sum + n, 0);
  let handled = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const consumer = queue.consume(topic, () => void (++handled === TOTAL && finished()), { concurrency: 50 });
  await done;
  await queue.waitUntilIdle(topic);
  await consumer.close();
  const counts = await commandCounts(redis);
  const scripts = [...counts].filter(([name]) => name.startsWith('evalsha') || name.startsWith('fcall'));
  const all = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 12);
  console.log(
    `${GROUPS} groups x ${PER_GROUP}, weights ${WEIGHTS ? 'on' : 'off'}, quota ${QUOTA ?? 'off'}: ${(all / TOTAL).toFixed(3)} commands per message`,
  );
  console.log(`  push ${(pushed / TOTAL).toFixed(3)}, consume ${((all - pushed) / TOTAL).toFixed(3)}`);
  console.log(`  script calls per message ${(scripts.reduce((s, [, n]) => s + n, 0) / TOTAL).toFixed(3)}`);
  console.log(`  ${top.map(([name, n]) => `${name} ${(n / TOTAL).toFixed(3)}`).join(', ')}`);
  await queue.close();
  await redis.stop();
}

void main();
