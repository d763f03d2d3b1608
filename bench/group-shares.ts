// Weighted fair share (the target: within ± 5 % of 1:2:5 over any 10 s): three groups of
// weights 1, 2 and 5, backlogged in proportion (UNIT, 2 UNIT, 5 UNIT messages), consumed at
// concurrency 50 with groupConcurrency 1000 (so a group's slots never bind: the weights decide).
// Handlers record each start's group and time; prints each group's share in every 10 s window
// (sliding by 1 s) while all three groups still have messages waiting, and the worst deviation.
// Run: npm run bench:group-shares [-- --unit=25000 --window-ms=10000]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { RedisAckQueueService } from '../lib/service/redis-ack-queue.service';
import { cpuModel, libVersion } from './machine';
import { BenchRedis } from './redis-server';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
// Enough for the three to stay backlogged over more than one window at ~40,000 starts/s.
const UNIT = arg('unit', 50_000);
const WINDOW_MS = arg('window-ms', 10_000);
const WEIGHTS: Record<string, number> = { a: 1, b: 2, c: 5 };
const TOTAL_WEIGHT = 8;

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const queue = new RedisAckQueueService({ connection: redis.url, logLevel: 'error' });
  await queue.connect();
  const topic = 'bench.group-shares';
  await queue.setGroupWeights(topic, WEIGHTS);
  const counts = Object.fromEntries(Object.entries(WEIGHTS).map(([group, w]) => [group, w * UNIT]));
  const total = UNIT * TOTAL_WEIGHT;
  let batch: { payload: number; group: string }[] = [];
  for (let n = 0; n < 5 * UNIT; n++) {
    for (const [group, count] of Object.entries(counts)) {
      if (n < count) batch.push({ payload: n, group });
      if (batch.length === 1000) {
        await queue.pushMany(topic, batch);
        batch = [];
      }
    }
  }
  if (batch.length > 0) await queue.pushMany(topic, batch);
  const starts: { group: string; at: number }[] = [];
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const consumer = queue.consume<number>(
    topic,
    (_n, context) => {
      starts.push({ group: context.group!, at: Date.now() });
      if (starts.length === total) finished();
    },
    { concurrency: 50, groupConcurrency: 1000 },
  );
  await done;
  await consumer.close();
  // All three backlogged until the first group's last start.
  const last = Math.min(...Object.keys(WEIGHTS).map((group) => starts.filter((s) => s.group === group).at(-1)!.at));
  const first = starts[0].at;
  let worst = 0;
  const lines: string[] = [];
  for (let from = first; from + WINDOW_MS <= last; from += 1000) {
    const window = starts.filter((s) => s.at >= from && s.at < from + WINDOW_MS);
    const shares = Object.entries(WEIGHTS).map(([group, w]) => {
      const got = window.filter((s) => s.group === group).length / window.length;
      const deviation = got / (w / TOTAL_WEIGHT) - 1;
      worst = Math.max(worst, Math.abs(deviation));
      return `${group} ${(got * 100).toFixed(2)} % (${(deviation * 100).toFixed(2)} %)`;
    });
    lines.push(
      `  ${((from - first) / 1000).toFixed(0)}-${((from - first + WINDOW_MS) / 1000).toFixed(0)} s, ${window.length} starts: ${shares.join(', ')}`,
    );
  }
  const report =
    `# Weighted fair share: groups of weights 1, 2 and 5, all backlogged\n\n` +
    `- Date: ${new Date().toISOString()}; ${libVersion()}; ${cpuModel()}, ${cpus().length} cores; Node ${process.version}\n` +
    `- Command: \`npm run bench:group-shares\`: ${total} messages (1:2:5 of them), concurrency 50, groupConcurrency 1000\n` +
    `- ${total} messages at ${(total / ((starts.at(-1)!.at - first) / 1000)).toFixed(0)}/s, shares 1:2:5 = 12.5/25/62.5 %\n\n` +
    `${lines.join('\n') || '  (the groups ran out before one window)'}\n\n` +
    `worst deviation from the weight's share over any ${WINDOW_MS / 1000} s window: ${(worst * 100).toFixed(2)} %\n`;
  console.log(report);
  const outDir = join(__dirname, '..', '..', 'results', ...(process.argv.length > 2 ? ['partial'] : []));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'group-shares.md'), report);
  if (lines.length === 0 || worst > 0.05) process.exitCode = 1;
  await queue.close();
  await redis.stop();
}

void main();
