// A service whose codec holds keys v1 and v2 (current v2), in a process of its own, for tests
// that kill a reencrypt midway. Uses the built library. Env: REDIS_URL or REDIS_CLUSTER, PREFIX,
// TOPIC, KEY_V1 and KEY_V2 (hex; test keys), MAX_PER_SECOND. Without RESUME it starts
// reencrypt(TOPIC) and runs it, printing one JSON line: ready, with its id and how many values it
// selected (`n`). With RESUME=1 it only consumes another topic, so its bulk runner takes over a
// reencrypt whose runner died; it prints ready, without an id.
const { RedisAckQueueService, createEncryptionCodec } = require('../../dist');
const { connectionFromEnv } = require('./env-connection');
const { say } = require('./say');

const queue = new RedisAckQueueService({
  connection: connectionFromEnv(),
  prefix: process.env.PREFIX || 'ackq',
  codec: createEncryptionCodec({ keys: { v1: process.env.KEY_V1, v2: process.env.KEY_V2 }, currentKeyId: 'v2' }),
  // A loaded test machine can hold a call past the default 5 s.
  commandTimeoutMs: 30_000,
});

const started = process.env.RESUME
  ? queue.connect().then(() => {
      queue.consume(`${process.env.TOPIC}-idle`, () => undefined);
      return { type: 'ready' };
    })
  : queue
      .connect()
      .then(() => queue.reencrypt(process.env.TOPIC, { maxPerSecond: Number(process.env.MAX_PER_SECOND) }))
      .then(({ id, selected }) => ({ type: 'ready', id, n: selected }));

started.then(say).catch((error) => {
  say({ type: 'error', message: error.message });
  process.exit(1);
});
