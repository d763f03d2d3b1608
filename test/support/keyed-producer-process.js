// A producer of pushes with a key mode, in a process of its own, racing others (see
// test/core/key-modes.int-spec.ts). Uses the built library. Env: REDIS_URL (or REDIS_CLUSTER),
// TOPIC, PARTITIONS (of the topic, default 1), OPTIONS (the push's options as JSON: its key
// mode), COUNT (pushes), BATCH (items per pushMany; 1: push), EVERY_MS (pause between calls),
// GO_FILE (a path: pushing starts once it exists, so that every process starts together).
// Prints one JSON line per event: ready, pushed (n: how many this call stored, ids: those it
// stored), closed. Payloads are { pid, n }.
const { existsSync } = require('node:fs');
const { RedisAckQueueService } = require('../../dist');
const { connectionFromEnv } = require('./env-connection');

const topic = process.env.TOPIC;
const queue = new RedisAckQueueService({
  connection: connectionFromEnv(),
  topics: { [topic]: { partitions: Number(process.env.PARTITIONS || 1) } },
});
const say = (event) => process.stdout.write(`${JSON.stringify({ pid: process.pid, now: Date.now(), ...event })}\n`);
const options = JSON.parse(process.env.OPTIONS);
const count = Number(process.env.COUNT || 100);
const batch = Number(process.env.BATCH || 1);
const everyMs = Number(process.env.EVERY_MS || 0);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

queue
  .connect()
  .then(async () => {
    say({ type: 'ready' });
    while (!existsSync(process.env.GO_FILE)) await pause(5);
    for (let sent = 0; sent < count; sent += batch) {
      const items = Array.from({ length: Math.min(batch, count - sent) }, (_, i) => ({
        ...options,
        payload: { pid: process.pid, n: sent + i },
      }));
      const results =
        items.length === 1 ? [await queue.push(topic, items[0].payload, options)] : await queue.pushMany(topic, items);
      const stored = results.filter((result) => result.duplicate === false).map((result) => result.id);
      say({ type: 'pushed', n: stored.length, ids: stored });
      if (everyMs > 0) await pause(everyMs);
    }
    await queue.close();
    say({ type: 'closed' });
    process.exit(0);
  })
  .catch((error) => {
    say({ type: 'error', message: error.message });
    process.exit(1);
  });
