import { createServer, type AddressInfo, type Socket } from 'node:net';
import { QueueClosedError, RedisAckQueueService, type ReservedMessage } from '../../lib';
import { eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

/** Every call of the public API, as a closed service is asked it (`message` was reserved before close). */
function everyCall(queue: RedisAckQueueService, topic: string, message: ReservedMessage) {
  return {
    connect: () => queue.connect(),
    push: () => queue.push(topic, 'x'),
    pushMany: () => queue.pushMany(topic, [{ payload: 'x' }]),
    pushFlow: () => queue.pushFlow({ topic, payload: 'x', children: [{ topic, payload: 'y' }] }),
    getFlow: () => queue.getFlow(topic, 'x'),
    checkTopic: () => queue.checkTopic(topic),
    stats: () => queue.stats(topic),
    gauges: () => queue.gauges(topic),
    history: () => queue.history(topic),
    deadLetters: () => queue.deadLetters(topic),
    requeueDead: () => queue.requeueDead(topic),
    purgeDead: () => queue.purgeDead(topic),
    ping: () => queue.ping(),
    get: () => queue.get(topic, message.id),
    list: () => queue.list(topic, 'ready'),
    count: () => queue.count(topic, 'ready', { tag: 'x' }),
    cancel: () => queue.cancel(topic, message.id),
    bulk: () => queue.bulk(topic, { action: 'requeue' }),
    bulkStatus: () => queue.bulkStatus('x'),
    abortBulk: () => queue.abortBulk('x'),
    reencrypt: () => queue.reencrypt(topic),
    pause: () => queue.pause(topic),
    resume: () => queue.resume(topic),
    setLimits: () => queue.setLimits(topic, { globalConcurrency: 1 }),
    limits: () => queue.limits(topic),
    setGroupWeights: () => queue.setGroupWeights(topic, { a: 2 }),
    groupWeights: () => queue.groupWeights(topic),
    setScalingTarget: () => queue.setScalingTarget(topic, { targetWaitMs: 1000 }),
    scaling: () => queue.scaling(topic),
    setGroupQuotas: () => queue.setGroupQuotas(topic, { default: { max: 1, perMs: 1000 } }),
    groupQuotas: () => queue.groupQuotas(topic),
    groupUsage: () => queue.groupUsage(topic),
    pushInTransaction: () => queue.pushInTransaction({}, topic, 1),
    pushManyInTransaction: () => queue.pushManyInTransaction({}, topic, [{ payload: 1 }]),
    pushFlowInTransaction: () => queue.pushFlowInTransaction({}, { topic, payload: 1 }),
    outboxStatus: () => queue.outboxStatus(),
    outboxDead: () => queue.outboxDead(),
    requeueOutboxDead: () => queue.requeueOutboxDead(),
    purgeOutboxDead: () => queue.purgeOutboxDead(),
    upsertSchedule: () => queue.upsertSchedule(topic, 'tick', { everyMs: 1000 }),
    removeSchedule: () => queue.removeSchedule(topic, 'tick'),
    runScheduleNow: () => queue.runScheduleNow(topic, 'tick'),
    declareSchedules: () => queue.declareSchedules([{ topic, name: 'tick', everyMs: 1000 }]),
    schedules: () => queue.schedules(topic),
    topics: () => queue.topics(),
    forgetTopic: () => queue.forgetTopic(topic),
    storedFormat: () => queue.storedFormat(),
    setStoredFormat: () => queue.setStoredFormat('compact'),
    reserve: () => queue.reserve(topic),
    ack: () => queue.ack(message),
    nack: () => queue.nack(message),
    extendLease: () => queue.extendLease(message, 1000),
    release: () => queue.release(message),
    waitUntilIdle: () => queue.waitUntilIdle(topic),
    consume: () => Promise.resolve().then(() => queue.consume(topic, () => undefined)),
    fleetEvents$: () => Promise.resolve().then(() => queue.fleetEvents$()),
  };
}

describe('a closed service', () => {
  const fx = useRedis();

  it('refuses every call with QueueClosedError, says the operation in words, and changes nothing', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    await queue.pushMany(topic, [{ payload: 'a' }, { payload: 'b' }]);
    const [message] = await queue.reserve(topic);
    await queue.close(0);
    const before = await snapshotTopic(fx.redis, topic);
    const calls = everyCall(queue, topic, message);
    for (const [name, call] of Object.entries(calls)) {
      const error = await call().then(
        () => undefined,
        (rejected: unknown) => rejected,
      );
      expect([name, error]).toEqual([name, expect.any(QueueClosedError)]);
      const { message: text } = error as QueueClosedError;
      // "Cannot read stats: the queue service is closed": the user's words, no method name.
      expect([name, text]).toEqual([name, expect.stringMatching(/^Cannot [a-z ]+: the queue service is closed$/)]);
    }
    expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
  });

  it('fails a connect still waiting for Redis with QueueClosedError as soon as close() is called, not at its timeout', async () => {
    // A server that accepts and never answers: the connect waits, neither ready nor failed.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => {
      sockets.push(socket);
      socket.resume(); // reads (and ignores) what the client sends, so its close is seen
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    fx.closers.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const connectTimeoutMs = 60_000;
    const queue = new RedisAckQueueService({
      connection: `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      connectTimeoutMs,
      scheduler: false,
    });
    const started = performance.now();
    const connecting = queue.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    await eventually(() => sockets.length === 1);
    await queue.close(0);
    expect(await connecting).toBeInstanceOf(QueueClosedError);
    expect(performance.now() - started).toBeLessThan(connectTimeoutMs);
  });

  it('covers every public method in that check (a new method must be added there)', async () => {
    const queue = await fx.service();
    const listed = Object.keys(everyCall(queue, uniqueTopic(), {} as ReservedMessage));
    // Not Redis calls: close itself, its Nest hook, and a snapshot of this process's consumers.
    const exempt = ['constructor', 'close', 'onApplicationShutdown', 'consumerLiveness', 'describeConnection'];
    const methods = Object.getOwnPropertyNames(RedisAckQueueService.prototype).filter((m) => !exempt.includes(m));
    expect(listed.sort()).toEqual(methods.sort());
  });
});
