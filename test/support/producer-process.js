// A producer in a process of its own, for tests that count what several processes recorded or
// race pushes from several processes. Uses the built library. Env: REDIS_URL (or REDIS_CLUSTER,
// seeds as host:port,...), TOPIC, PREFIX, PARTITIONS (of the topic, default 1), COUNT (messages),
// BATCH (per pushMany; 1: one push each), EVERY_MS (pause between calls), OPTIONS (push options as
// JSON, given to every message, e.g. a key mode), GO_FILE (a path: pushing starts once it exists,
// so that several processes start together), PLAN (start-by deadlines, JSON: a list of
// { startByAheadMs } or { expiresInMs }, message n takes entry n % length; startBy is this
// process' Date.now() + startByAheadMs, so a skewed clock skews it; one push a call). Prints one
// JSON line per event: ready, pushed (with n, the messages that call stored, and ids, theirs;
// with PLAN also startBy or expiresInMs), refused (with PLAN: the option an InvalidOptionError
// named, and startBy), closed. Payloads are { n, from: pid }.
const { existsSync } = require('node:fs');
const { RedisAckQueueService } = require('../../dist');
const { connectionFromEnv } = require('./env-connection');

const topic = process.env.TOPIC;
const queue = new RedisAckQueueService({
  connection: connectionFromEnv(),
  prefix: process.env.PREFIX || 'ackq',
  topics: { [topic]: { partitions: Number(process.env.PARTITIONS || 1) } },
});
const { say } = require('./say');
const count = Number(process.env.COUNT || 1000);
const batch = Number(process.env.BATCH || 50);
const everyMs = Number(process.env.EVERY_MS ?? 20);
const options = JSON.parse(process.env.OPTIONS || '{}');
const plan = process.env.PLAN ? JSON.parse(process.env.PLAN) : undefined;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

queue
  .connect()
  .then(async () => {
    say({ type: 'ready' });
    while (process.env.GO_FILE && !existsSync(process.env.GO_FILE)) await pause(5);
    for (let n = 0; plan && n < count; n++) {
      const step = plan[n % plan.length];
      const deadline =
        step.startByAheadMs === undefined
          ? { expiresInMs: step.expiresInMs }
          : { startBy: Date.now() + step.startByAheadMs };
      try {
        const { id } = await queue.push(topic, { n, from: process.pid }, { ...options, ...deadline });
        say({ type: 'pushed', n: 1, ids: [id], ...deadline });
      } catch (error) {
        if (error.name !== 'InvalidOptionError') throw error;
        say({ type: 'refused', option: error.option, ...deadline });
      }
      if (everyMs > 0) await pause(everyMs);
    }
    for (let sent = 0; !plan && sent < count; sent += batch) {
      const n = Math.min(batch, count - sent);
      const items = Array.from({ length: n }, (_, i) => ({ ...options, payload: { n: sent + i, from: process.pid } }));
      const results =
        n === 1 ? [await queue.push(topic, items[0].payload, options)] : await queue.pushMany(topic, items);
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
