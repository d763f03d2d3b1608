// A consumer process of the rate-limit benchmark (bench/rate-limit.ts): consumes TOPIC under the
// fleet-wide rateLimit RATE per second and reports each handler start's time to its parent.
import { RedisAckQueueService } from '../lib';

async function main(): Promise<void> {
  const queue = new RedisAckQueueService({ connection: process.env.REDIS_URL, logLevel: 'error' });
  await queue.connect();
  let starts: number[] = [];
  const flush = () => {
    if (starts.length > 0) process.send?.(starts);
    starts = [];
  };
  setInterval(flush, 100);
  queue.consume(process.env.TOPIC!, () => void starts.push(Date.now()), {
    concurrency: 20,
    rateLimit: { max: Number(process.env.RATE), perMs: 1_000 },
  });
  process.send?.('ready');
  process.on('message', (message) => {
    if (message !== 'stop') return;
    flush();
    void queue.close().then(() => process.exit(0));
  });
}

void main();
