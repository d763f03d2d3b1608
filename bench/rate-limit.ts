// A fleet-wide rate limit across three consumer processes: a deep backlog on a topic limited to
// RATE deliveries per second, released 250 ms before a second of the server clock ends (where a
// fixed window would let a second burst follow at once), consumed for SECONDS. Prints the most
// starts in any interval of one second (sliding over every start, on the server's clock and on
// the handlers') against the limit, the dispatch delays, and the rate achieved as % of the limit.
// Fails when a second on the server clock holds more than the limit; the handlers' clocks keep it
// while the spread of dispatch delays (handler start less reserve) stays within the allowance.
// Run: npm run bench:rate-limit [-- --rate=2000 --seconds=10 --quick]
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { RedisAckQueueService } from '../lib';
import { dispatchAllowanceMs, dispatchDelays, maxStartsInAnyInterval } from '../test/support/start-times';
import { BenchRedis } from './redis-server';

const quick = process.argv.includes('--quick');
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const RATE = arg('rate', quick ? 500 : 2_000);
const SECONDS = arg('seconds', quick ? 3 : 10);
const PROCESSES = 3;
const PER_MS = 1_000;

async function serverNow(redis: BenchRedis): Promise<number> {
  const [seconds, micros] = await redis.admin.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  const children: ChildProcess[] = [];
  try {
    const topic = `bench.rate.${Date.now()}`;
    const queue = new RedisAckQueueService({ connection: redis.url, logLevel: 'error' });
    await queue.pause(topic);
    const backlog = RATE * (SECONDS + 2);
    for (let i = 0; i < backlog; i += 1000) {
      await queue.pushMany(
        topic,
        Array.from({ length: Math.min(1000, backlog - i) }, (_, j) => ({ payload: i + j })),
      );
    }
    const handlerStarts: number[] = [];
    const serverStarts: number[] = [];
    for (let p = 0; p < PROCESSES; p++) {
      const child = fork(join(__dirname, 'rate-consumer.js'), {
        env: { ...process.env, REDIS_URL: redis.url, TOPIC: topic, RATE: String(RATE) },
      });
      children.push(child);
      await new Promise<void>((resolve) =>
        child.on('message', (message) => {
          if (message === 'ready') return resolve();
          for (const [at, server] of message as [number, number][]) {
            handlerStarts.push(at);
            serverStarts.push(server);
          }
        }),
      );
    }
    // Released 250 ms before the server's next whole second: fixed windows burst across it.
    const now = await serverNow(redis);
    const release = now - (now % PER_MS) + 2 * PER_MS - 250;
    await new Promise((resolve) => setTimeout(resolve, release - now));
    await queue.resume(topic);
    await new Promise((resolve) => setTimeout(resolve, SECONDS * PER_MS + 500));
    await Promise.all(
      children.map((child) => new Promise((resolve) => (child.once('exit', resolve), child.send('stop')))),
    );
    await queue.close();
    // The rate achieved: the starts before the last window's first, over the time they took (whole
    // windows, so a window cut off by the end does not count as a fast one).
    const sorted = [...serverStarts].sort((a, b) => a - b);
    const windows = Math.floor((sorted.length - 1) / RATE);
    const achieved = (windows * RATE * PER_MS) / (sorted[windows * RATE] - sorted[0]);
    const serverMax = maxStartsInAnyInterval(serverStarts, PER_MS);
    const handlerMax = maxStartsInAnyInterval(handlerStarts, PER_MS);
    const delay = dispatchDelays(handlerStarts, serverStarts);
    process.stdout.write(
      `fleet-wide rate limit: ${RATE}/s across ${PROCESSES} consumer processes, ${SECONDS} s of a deep backlog\n` +
        `most starts in any ${PER_MS} ms: ${serverMax} on the server clock (limit ${RATE}), ` +
        `${handlerMax} on the handlers' clocks (${handlerMax <= RATE ? 'held' : 'NOT held'})\n` +
        `dispatch delay (handler start less reserve, ms): min ${delay.min}, median ${delay.p50}, ` +
        `p99 ${delay.p99}, max ${delay.max}; spread ${delay.max - delay.min} against an allowance of ` +
        `${dispatchAllowanceMs(PER_MS)}\n` +
        `achieved ${achieved.toFixed(0)}/s = ${((achieved / RATE) * 100).toFixed(1)} % of the limit ` +
        `(${windows * RATE} starts over ${sorted[windows * RATE] - sorted[0]} ms)\n`,
    );
    if (serverMax > RATE) {
      process.stdout.write(`FAILED: ${serverMax} starts within ${PER_MS} ms, over the limit of ${RATE}\n`);
      process.exitCode = 1;
    }
  } finally {
    for (const child of children) child.kill();
    await redis.stop();
  }
}

void main();
