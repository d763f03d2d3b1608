// An outbox relay in a process of its own, for the fault tests that SIGKILL it mid-batch. Uses the
// built library (npx nest build). Env: REDIS_URL (or REDIS_CLUSTER), PG_URL (the outbox's
// database), OUTBOX_TABLE (default: the default table), POLL_MS (default 50), and, test-only,
// ACKQ_OUTBOX_TEST_STOP_AT ('claimed' | 'pushed' | 'committed'), read by the relay itself: it
// SIGKILLs this process at that step of its first batch with rows. Prints ready, then closed
// after SIGTERM.
const { RedisAckQueueService } = require('../../dist');
const { connectionFromEnv } = require('./env-connection');
const { say } = require('./say');

const queue = new RedisAckQueueService({
  connection: connectionFromEnv(),
  outbox: {
    connection: process.env.PG_URL,
    ...(process.env.OUTBOX_TABLE ? { table: process.env.OUTBOX_TABLE } : {}),
    relay: { pollMs: Number(process.env.POLL_MS || 50) },
  },
});

process.on('SIGTERM', () => {
  queue.close().then(
    () => {
      say({ type: 'closed' });
      process.exit(0);
    },
    () => process.exit(1),
  );
});

queue.connect().then(
  () => say({ type: 'ready' }),
  (error) => {
    say({ type: 'failed', error: String(error && error.code) });
    process.exit(1);
  },
);
