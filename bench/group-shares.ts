// Weighted fair share (the target: within ± 5 % of 1:2:5 over any 10 s): three groups of
// weights 1, 2 and 5, backlogged in proportion (UNIT, 2 UNIT, 5 UNIT messages), consumed in four
// cases: concurrency 50 with groupConcurrency 1000 (a group's slots never bind), then ordered groups
// (groupConcurrency 1) at concurrency 1 and 50, and at 50 with the heaviest group's handler the
// slowest (a 1 ms timer): there a group's one running message must not give its turns away.
// Handlers record each start's group and time; prints each group's share in every 10 s window
// (sliding by 1 s) while all three groups still have messages waiting, and the worst deviation.
// Each case stops after --seconds (or when its messages run out).
// Run: npm run bench:group-shares [-- --unit=50000 --window-ms=10000 --seconds=22]
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
const SECONDS = arg('seconds', 22);
const WEIGHTS: Record<string, number> = { a: 1, b: 2, c: 5 };
const TOTAL_WEIGHT = 8;

type Case = { label: string; concurrency: number; groupConcurrency: number; slowHeaviest?: boolean };
const CASES: Case[] = [
  { label: 'concurrency 50, groupConcurrency 1000', concurrency: 50, groupConcurrency: 1000 },
  { label: 'concurrency 1, groupConcurrency 1', concurrency: 1, groupConcurrency: 1 },
  { label: 'concurrency 50, groupConcurrency 1', concurrency: 50, groupConcurrency: 1 },
  {
    label: "concurrency 50, groupConcurrency 1, c's handler 1 ms (a's and b's none)",
    concurrency: 50,
    groupConcurrency: 1,
    slowHeaviest: true,
  },
];

type Start = { group: string; at: number };

async function pushBacklog(queue: RedisAckQueueService, topic: string): Promise<void> {
  let batch: { payload: number; group: string }[] = [];
  for (let n = 0; n < 5 * UNIT; n++) {
    for (const [group, w] of Object.entries(WEIGHTS)) {
      if (n < w * UNIT) batch.push({ payload: n, group });
      if (batch.length === 1000) {
        await queue.pushMany(topic, batch);
        batch = [];
      }
    }
  }
  if (batch.length > 0) await queue.pushMany(topic, batch);
}

/** Runs one case; returns its report lines and worst deviation (Infinity: no full window). */
async function runCase(
  queue: RedisAckQueueService,
  index: number,
  spec: Case,
): Promise<{ text: string; worst: number }> {
  const topic = `bench.group-shares.${index}`;
  await queue.setGroupWeights(topic, WEIGHTS);
  await pushBacklog(queue, topic);
  const total = UNIT * TOTAL_WEIGHT;
  const starts: Start[] = [];
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const timer = setTimeout(() => finished(), SECONDS * 1000);
  const consumer = queue.consume<number>(
    topic,
    async (_n, context) => {
      starts.push({ group: context.group!, at: Date.now() });
      if (starts.length === total) finished();
      if (spec.slowHeaviest && context.group === 'c') await new Promise((resolve) => setTimeout(resolve, 1));
    },
    { concurrency: spec.concurrency, groupConcurrency: spec.groupConcurrency },
  );
  await done;
  clearTimeout(timer);
  const stoppedAt = Date.now();
  await consumer.close();
  // All three backlogged until the first group's last start (or the stop).
  const exhausted = Object.entries(WEIGHTS).filter(([g, w]) => starts.filter((s) => s.group === g).length === w * UNIT);
  const last = Math.min(stoppedAt, ...exhausted.map(([g]) => starts.filter((s) => s.group === g).at(-1)!.at));
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
  const rate = starts.length / ((starts.at(-1)!.at - first) / 1000);
  if (lines.length === 0) worst = Infinity;
  const text =
    `## ${spec.label}\n\n` +
    `${starts.length} starts at ${rate.toFixed(0)}/s\n\n` +
    `${lines.join('\n') || '  (the groups ran out before one window)'}\n\n` +
    `worst deviation from the weight's share over any ${WINDOW_MS / 1000} s window: ${(worst * 100).toFixed(2)} %\n`;
  console.log(text);
  return { text, worst };
}

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const queue = new RedisAckQueueService({ connection: redis.url, logLevel: 'error' });
  await queue.connect();
  const results: { text: string; worst: number }[] = [];
  for (const [index, spec] of CASES.entries()) results.push(await runCase(queue, index, spec));
  const summary = CASES.map(
    (spec, i) =>
      `| ${spec.label} | ± 5 % | ${(results[i].worst * 100).toFixed(2)} % | ${results[i].worst <= 0.05 ? 'met' : '**short**'} |`,
  );
  const report =
    `# Weighted fair share: groups of weights 1, 2 and 5, all backlogged\n\n` +
    `- Date: ${new Date().toISOString()}; ${libVersion()}; ${cpuModel()}, ${cpus().length} cores; Node ${process.version}\n` +
    `- Command: \`npm run bench:group-shares\`: up to ${UNIT * TOTAL_WEIGHT} messages per case (1:2:5 of them), each case for at most ${SECONDS} s; shares 1:2:5 = 12.5/25/62.5 %\n\n` +
    `| case | target: worst deviation over any ${WINDOW_MS / 1000} s | measured | |\n| --- | --- | --- | --- |\n${summary.join('\n')}\n\n` +
    results.map((r) => r.text).join('\n');
  const outDir = join(__dirname, '..', '..', 'results', ...(process.argv.length > 2 ? ['partial'] : []));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'group-shares.md'), report);
  if (results.some((r) => r.worst > 0.05)) process.exitCode = 1;
  await queue.close();
  await redis.stop();
}

void main();
