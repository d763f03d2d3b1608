// A consumer in a process of its own, for tests that kill it. Uses the built library.
// Env: REDIS_URL, TOPIC, LEASE_MS, HANDLER_MS, CONCURRENCY, PREFIX. Prints one JSON line per event.
const { RedisAckQueueService } = require('../../dist');

const queue = new RedisAckQueueService({
  connection: process.env.REDIS_URL,
  prefix: process.env.PREFIX || 'ackq',
  leaseMs: Number(process.env.LEASE_MS || 1000),
});
const say = (event) => process.stdout.write(`${JSON.stringify({ pid: process.pid, ...event })}\n`);

queue
  .connect()
  .then(() => {
    const consumer = queue.consume(
      process.env.TOPIC,
      async (payload, context) => {
        say({ type: 'start', id: context.id, attempt: context.attempt });
        await new Promise((resolve) => setTimeout(resolve, Number(process.env.HANDLER_MS || 50)));
        say({ type: 'done', id: context.id, attempt: context.attempt });
      },
      { concurrency: Number(process.env.CONCURRENCY || 4) },
    );
    queue.events$.subscribe((event) => {
      if (event.type === 'acked' || event.type === 'lease-lost') say({ type: event.type, id: event.id });
    });
    say({ type: 'ready' });
    process.once('SIGTERM', () => consumer.close().then(() => queue.close()).then(() => process.exit(0)));
  })
  .catch((error) => {
    say({ type: 'error', message: error.message });
    process.exit(1);
  });
