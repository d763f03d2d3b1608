// A consumer process of the rate-limit benchmark (bench/rate-limit.ts): consumes TOPIC under the
// fleet-wide rateLimit RATE per second and reports each delivery's start to its parent, on both
// clocks (see test/support/start-times.ts): [handler Date.now(), server-clock start].
import { RedisAckQueueService } from '../lib';

async function main(): Promise<void> {
  const queue = new RedisAckQueueService({ connection: process.env.REDIS_URL, logLevel: 'error' });
  await queue.connect();
  const handled = new Map<string, { at: number; enqueuedAt: number }>();
  let starts: [number, number][] = [];
  queue.events$.subscribe((event) => {
    const start = event.type === 'acked' && handled.get(event.id!);
    if (!start || event.waitMs === undefined) return;
    handled.delete(event.id!);
    starts.push([start.at, start.enqueuedAt + event.waitMs]);
  });
  const flush = () => {
    if (starts.length > 0) process.send?.(starts);
    starts = [];
  };
  setInterval(flush, 100);
  queue.consume(
    process.env.TOPIC!,
    (_payload, context) => void handled.set(context.id, { at: Date.now(), enqueuedAt: context.enqueuedAt }),
    {
      concurrency: 20,
      rateLimit: { max: Number(process.env.RATE), perMs: 1_000 },
    },
  );
  process.send?.('ready');
  process.on('message', (message) => {
    if (message !== 'stop') return;
    void queue.close().then(() => {
      flush();
      process.exit(0);
    });
  });
}

void main();
