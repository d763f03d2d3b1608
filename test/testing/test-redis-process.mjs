// An ES module that starts a test Redis with the built testing entry point, prints
// {"port","dir"}, awaits stop() at the top level and prints "stopped": an ES module whose
// top-level await never settles exits with code 13 instead.
import testing from '../../dist/testing/index.js';

const redis = await testing.startTestRedis();
process.stdout.write(`${JSON.stringify({ port: redis.port, dir: redis.dir })}\n`);
await redis.stop();
process.stdout.write('stopped\n');
