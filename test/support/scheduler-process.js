// An app instance that runs schedules, in a process of its own, for tests that kill it. Uses
// the built library. Env: REDIS_URL, PREFIX, TOPIC, EVERY_MS. It upserts one schedule
// ("tick", every EVERY_MS) as every instance of an app would at startup, and so runs the
// scheduler; it does not consume. Prints one JSON line per event: ready, pushed (a tick it won).
const { RedisAckQueueService } = require('../../dist');

const queue = new RedisAckQueueService({ connection: process.env.REDIS_URL, prefix: process.env.PREFIX || 'ackq' });
const { say } = require('./say');

queue
  .connect()
  .then(() => queue.upsertSchedule(process.env.TOPIC, 'tick', { everyMs: Number(process.env.EVERY_MS) }))
  .then(() => {
    queue.events$.subscribe((event) => {
      if (event.type === 'pushed') say({ type: 'pushed', id: event.id });
    });
    say({ type: 'ready' });
  })
  .catch((error) => {
    say({ type: 'error', message: error.message });
    process.exit(1);
  });
