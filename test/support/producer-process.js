// A producer in a process of its own, for tests that count what several processes recorded.
// Uses the built library. Env: REDIS_URL (or REDIS_CLUSTER, seeds as host:port,...), TOPIC,
// PREFIX, COUNT (messages), BATCH (per pushMany), EVERY_MS (pause between batches).
// Prints one JSON line per event: ready, pushed (with n, the messages stored), closed.
const { RedisAckQueueService } = require('../../dist');
const { connectionFromEnv } = require('./env-connection');

const queue = new RedisAckQueueService({
  connection: connectionFromEnv(),
  prefix: process.env.PREFIX || 'ackq',
});
const say = (event) => process.stdout.write(`${JSON.stringify({ pid: process.pid, now: Date.now(), ...event })}\n`);
const count = Number(process.env.COUNT || 1000);
const batch = Number(process.env.BATCH || 50);
const everyMs = Number(process.env.EVERY_MS || 20);

queue
  .connect()
  .then(async () => {
    say({ type: 'ready' });
    for (let sent = 0; sent < count; sent += batch) {
      const n = Math.min(batch, count - sent);
      const results = await queue.pushMany(
        process.env.TOPIC,
        Array.from({ length: n }, (_, i) => ({ payload: { n: sent + i, from: process.pid } })),
      );
      say({ type: 'pushed', n: results.filter((r) => !r.duplicate).length });
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
    await queue.close();
    say({ type: 'closed' });
    process.exit(0);
  })
  .catch((error) => {
    say({ type: 'error', message: error.message });
    process.exit(1);
  });
