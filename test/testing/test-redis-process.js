// A process that starts a test Redis with the built testing entry point, prints
// {"port","dir"} and then, by MODE: `return` ends without stop() (the event loop empties),
// `exit` calls process.exit(0), `wait` stays up until a signal ends it, `stop` awaits stop()
// and prints "stopped" (nothing else keeps the process alive while it waits).
const { startTestRedis } = require('../../dist/testing');

startTestRedis().then(async (redis) => {
  process.stdout.write(`${JSON.stringify({ port: redis.port, dir: redis.dir })}\n`);
  if (process.env.MODE === 'exit') process.exit(0);
  if (process.env.MODE === 'wait') setInterval(() => undefined, 1_000);
  if (process.env.MODE === 'stop') {
    await redis.stop();
    process.stdout.write('stopped\n');
  }
});
