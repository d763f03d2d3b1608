// A Nest microservice on RedisAckQueueServer in a process of its own, for tests that kill it.
// Uses the built library. Env: REDIS_URL (or REDIS_CLUSTER), PREFIX, LEASE_MS, CONCURRENCY.
// Handlers: the event pattern 'ms.event' and the request pattern 'ms.request'. Payload knobs
// (objects only): `n` (echoed), `holdUntilFile` (holds the handler, loop running, until that
// file exists), `handlerMs` (default 5), `reply` (what a request answers; else `reply:<n>`).
// Prints one JSON line per event: ready, start and done (with id, attempt, pattern, n), closed.
require('reflect-metadata');
const { existsSync } = require('node:fs');
const { Controller, Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { Ctx, EventPattern, MessagePattern, Payload } = require('@nestjs/microservices');
const { RedisAckQueueServer } = require('../../dist/microservices');
const { connectionFromEnv } = require('./env-connection');

const { say } = require('./say');

async function handle(data, context) {
  const knobs = typeof data === 'object' && data !== null ? data : {};
  const seen = { id: context.id, attempt: context.attempt, pattern: context.getPattern(), n: knobs.n };
  say({ type: 'start', ...seen });
  if (typeof knobs.holdUntilFile === 'string') {
    while (!existsSync(knobs.holdUntilFile)) await new Promise((resolve) => setTimeout(resolve, 20));
  } else {
    await new Promise((resolve) => setTimeout(resolve, typeof knobs.handlerMs === 'number' ? knobs.handlerMs : 5));
  }
  say({ type: 'done', ...seen });
  return knobs.reply ?? `reply:${knobs.n}`;
}

class Handlers {
  onEvent(data, context) {
    return handle(data, context);
  }
  onRequest(data, context) {
    return handle(data, context);
  }
}
// The decorators of `@EventPattern('ms.event') onEvent(@Payload() data, @Ctx() context)`, in plain JavaScript.
for (const [name, pattern] of [
  ['onEvent', EventPattern('ms.event')],
  ['onRequest', MessagePattern('ms.request')],
]) {
  Payload()(Handlers.prototype, name, 0);
  Ctx()(Handlers.prototype, name, 1);
  pattern(Handlers.prototype, name, Object.getOwnPropertyDescriptor(Handlers.prototype, name));
}
Controller()(Handlers);

class AppModule {}
Module({ controllers: [Handlers] })(AppModule);

async function main() {
  const strategy = new RedisAckQueueServer({
    connection: connectionFromEnv(),
    prefix: process.env.PREFIX || 'ackq',
    leaseMs: Number(process.env.LEASE_MS || 1000),
    concurrency: Number(process.env.CONCURRENCY || 4),
    logLevel: 'error',
  });
  const app = await NestFactory.createMicroservice(AppModule, { strategy, logger: ['error'] });
  await app.listen();
  say({ type: 'ready' });
  process.once('SIGTERM', () => {
    void app.close().then(() => {
      say({ type: 'closed' });
      process.exit(0);
    });
  });
}

main().catch((error) => {
  say({ type: 'error', message: String(error && error.message) });
  process.exit(1);
});
