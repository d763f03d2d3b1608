// A service that starts a bulk action and runs it, in a process of its own, for tests that
// kill it midway. Uses the built library. Env: REDIS_URL or REDIS_CLUSTER, PREFIX, TOPIC, TAG,
// MAX_PER_SECOND. It requeues the topic's dead letters tagged TAG; it does not consume. Prints
// one JSON line: ready, with the bulk action's id and how many it selected (`n`).
const { RedisAckQueueService } = require('../../dist');
const { connectionFromEnv } = require('./env-connection');
const { say } = require('./say');

const queue = new RedisAckQueueService({
  connection: connectionFromEnv(),
  prefix: process.env.PREFIX || 'ackq',
  // A loaded test machine can hold a call past the default 5 s.
  commandTimeoutMs: 30_000,
});

queue
  .connect()
  .then(() =>
    queue.bulk(process.env.TOPIC, {
      action: 'requeue',
      filter: { state: 'dead', tag: process.env.TAG },
      maxPerSecond: Number(process.env.MAX_PER_SECOND),
    }),
  )
  .then(({ id, selected }) => say({ type: 'ready', id, n: selected }))
  .catch((error) => {
    say({ type: 'error', message: error.message });
    process.exit(1);
  });
