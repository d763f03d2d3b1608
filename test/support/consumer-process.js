// A consumer in a process of its own, for tests that kill it. Uses the built library.
// Env: REDIS_URL (or REDIS_CLUSTER, seeds as host:port,host:port...), TOPIC (or TOPICS, comma-separated:
// one consumer each), LEASE_MS, HANDLER_MS, CONCURRENCY, PREFIX. Prints one JSON line per event, with
// its topic.
// Optional env (fault tests): DRAIN_MS (shutdown drain), MAX_ATTEMPTS, BLOCK_MS or BLOCK_UNTIL_FILE
// (see below), GLOBAL_CONCURRENCY (the topic's fleet-wide limit, written when the consumer starts),
// FLEET_EVENTS (any value: the service appends its events to the fleet event stream), KEEP_COMPLETED
// (any value: acked messages are kept as completed records, so their ids stay duplicates).
// Optional payload knobs, read only from object payloads: `handlerMs` overrides HANDLER_MS;
// `block: true` busy-waits synchronously (the event loop stalls: no timer, no heartbeat) for
// BLOCK_MS, or until the file BLOCK_UNTIL_FILE exists (the test creates it on an event, so the
// stall ends on what the test waits for, not on the machine's speed); `holdUntilFile` (in a
// process without a block) holds the handler, loop running, until that file exists;
// `fail: true` makes the handler throw; `result` is returned as `{ value: result, pid, attempt }`
// (a flow's child hands it to its parent: the run it came from is known); `reportChildren: true`
// adds what `context.childResults()` and `context.failedChildren()` answered to the start line.
// Every line carries `now`, this process' Date.now() (shows a faked clock).
const { RedisAckQueueService } = require('../../dist');
const { connectionFromEnv } = require('./env-connection');

const { existsSync } = require('node:fs');

const blockMs = Number(process.env.BLOCK_MS || 0);
const blockUntilFile = process.env.BLOCK_UNTIL_FILE;
const blocks = blockMs > 0 || Boolean(blockUntilFile);
const queue = new RedisAckQueueService({
  connection: connectionFromEnv(),
  prefix: process.env.PREFIX || 'ackq',
  leaseMs: Number(process.env.LEASE_MS || 1000),
  ...(process.env.DRAIN_MS ? { drainMs: Number(process.env.DRAIN_MS) } : {}),
  ...(process.env.MAX_ATTEMPTS ? { maxAttempts: Number(process.env.MAX_ATTEMPTS) } : {}),
  ...(process.env.FLEET_EVENTS ? { fleetEvents: true } : {}),
  ...(process.env.KEEP_COMPLETED ? { keepCompleted: true } : {}),
});
const { say } = require('./say');

queue
  .connect()
  .then(() => {
    const handler = (topic) => async (payload, context) => {
      const knobs = typeof payload === 'object' && payload !== null ? payload : {};
      // A child acked without a result (by hand) shows as null (JSON has no undefined).
      const seen = knobs.reportChildren === true && {
        children: JSON.parse(
          JSON.stringify(context.childResults(), (_, value) => (value === undefined ? null : value)),
        ),
        failed: context.failedChildren(),
      };
      say({
        type: 'start',
        topic,
        id: context.id,
        attempt: context.attempt,
        group: context.group,
        enqueuedAt: context.enqueuedAt,
        ...seen,
      });
      if (knobs.block === true && blocks) {
        const until = Date.now() + blockMs;
        while (blockUntilFile ? !existsSync(blockUntilFile) : Date.now() < until) {
          // Busy-wait on purpose: nothing else runs in this process meanwhile.
        }
      } else if (typeof knobs.holdUntilFile === 'string') {
        while (!existsSync(knobs.holdUntilFile)) await new Promise((resolve) => setTimeout(resolve, 20));
      } else {
        const ms = typeof knobs.handlerMs === 'number' ? knobs.handlerMs : Number(process.env.HANDLER_MS || 50);
        await new Promise((resolve) => setTimeout(resolve, ms));
      }
      if (knobs.fail === true) throw new Error(`handler told to fail (${context.id})`);
      say({ type: 'done', topic, id: context.id, attempt: context.attempt, group: context.group });
      if (knobs.result !== undefined) return { value: knobs.result, pid: process.pid, attempt: context.attempt };
    };
    const topics = (process.env.TOPICS || process.env.TOPIC).split(',');
    const consumers = topics.map((topic) =>
      queue.consume(topic, handler(topic), {
        concurrency: Number(process.env.CONCURRENCY || 4),
        ...(process.env.GLOBAL_CONCURRENCY ? { globalConcurrency: Number(process.env.GLOBAL_CONCURRENCY) } : {}),
      }),
    );
    queue.events$.subscribe((event) => {
      const { topic, id, attempt } = event;
      if (event.type === 'acked') say({ type: event.type, topic, id, attempt, waitMs: event.waitMs });
      else if (event.type === 'lease-lost') say({ type: event.type, topic, id, attempt });
      else if (event.type === 'retried' || event.type === 'dead') say({ type: event.type, topic, id, attempt });
      else if (event.type === 'error')
        say({ type: 'queue-error', topic, id, attempt, message: event.error && event.error.message });
    });
    say({ type: 'ready' });
    process.once('SIGTERM', () =>
      Promise.all(consumers.map((consumer) => consumer.close()))
        .then(() => queue.close())
        .then(() => {
          say({ type: 'closed' });
          process.exit(0);
        }),
    );
  })
  .catch((error) => {
    say({ type: 'error', message: error.message });
    process.exit(1);
  });
