import { firstValueFrom } from 'rxjs';
import { filter, take, toArray } from 'rxjs/operators';
import {
  HandlerTimeoutError,
  LeaseLostError,
  MessageRejectedError,
  type MessageContext,
  type RedisAckQueueEvent,
} from '../../lib';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { commandCounts, eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { quietFor, untilConsumerBlocked, wellBefore } from '../support/waits';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';
import { gate } from '../support/gate';
import { BULK_POLL_MS } from '../../lib/consumer/bulk-runner';

describe('consume: the poller', () => {
  const fx = useRedis();

  it('acks only when the handler promise resolves', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const release = gate();
    const started = gate();
    const consumer = queue.consume(topic, async () => {
      started.open();
      await release.promise;
    });
    await queue.push(topic, 'x');
    await started.promise;
    expect(await queue.stats(topic)).toMatchObject({ leased: 1 });
    release.open();
    await queue.waitUntilIdle(topic);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
    await consumer.close();
  });

  it('closes at once when no handler runs, without waiting out drainMs', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const consumer = queue.consume(topic, () => undefined, { leaseMs: 600 });
    await queue.push(topic, 'x');
    await queue.waitUntilIdle(topic);
    const started = Date.now();
    await consumer.close(10_000);
    // Not the 10 s drain waited out.
    expect(Date.now() - started).toBeLessThan(wellBefore(10_000));
  });

  it('keeps a never-resolving handler leased by heartbeat, well past leaseMs', async () => {
    // A lease long enough that a loaded machine's stall (a heartbeat comes every third of it) does
    // not lose it: the check is that the heartbeats keep it, not how promptly the machine runs them.
    const leaseMs = 1_500;
    const queue = await fx.service();
    const topic = uniqueTopic();
    const started = gate<MessageContext>();
    const consumer = queue.consume(
      topic,
      (_payload, context) => {
        started.open(context);
        return new Promise(() => undefined);
      },
      { leaseMs },
    );
    await queue.push(topic, 'x');
    const context = await started.promise;
    const other = await fx.service();
    // A negative check, so it takes time: for three leases another consumer asking every 150 ms
    // never gets the message.
    const since = Date.now();
    while (Date.now() - since < 3 * leaseMs) {
      await quietFor(150, 'the lease of a running handler expiring');
      expect(await other.reserve(topic)).toEqual([]);
    }
    expect(await queue.stats(topic)).toMatchObject({ leased: 1 });
    expect(context.signal.aborted).toBe(false);
    // close(0) gives the handler no time: its message goes back to ready, and that is logged.
    expectLogs(/Released 1 unfinished message\(s\)/);
    await consumer.close(0);
    expect(loggedLines(/^Released 1 unfinished/)).toHaveLength(1);
  });

  it('fails a handler at timeoutMs: aborts its signal and redelivers after the backoff', async () => {
    expectLogs(/failed on attempt 1 of 5: HandlerTimeoutError/);
    const queue = await fx.service();
    const topic = uniqueTopic();
    const contexts: MessageContext[] = [];
    const consumer = queue.consume(
      topic,
      (_payload, context) => {
        contexts.push(context);
        return context.attempt === 1 ? new Promise(() => undefined) : 'done';
      },
      { timeoutMs: 200, backoff: { type: 'fixed', delayMs: 10 } },
    );
    await queue.push(topic, 'x');
    await queue.waitUntilIdle(topic);
    expect(contexts.map((c) => c.attempt)).toEqual([1, 2]);
    expect(contexts[0].signal.reason).toBeInstanceOf(HandlerTimeoutError);
    await consumer.close();
  });

  it('retries with backoff, then dead-letters with the error after maxAttempts', async () => {
    expectLogs(/failed on attempt [12] of 3/, /went to the dead letters as failed on attempt 3/);
    const queue = await fx.service();
    const topic = uniqueTopic();
    const attempts: number[] = [];
    const events = firstValueFrom(
      queue.events$.pipe(
        filter((e) => e.topic === topic && (e.type === 'retried' || e.type === 'dead')),
        take(3),
        toArray(),
      ),
    );
    const consumer = queue.consume(
      topic,
      (_payload, context) => {
        attempts.push(context.attempt);
        if (context.attempt === 2) throw new RangeError('synchronous failure');
        return Promise.reject(new Error(`async failure ${context.attempt}`));
      },
      { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 50 } },
    );
    await queue.push(topic, 'poison');
    await queue.waitUntilIdle(topic);
    expect(attempts).toEqual([1, 2, 3]);
    expect((await events).map((e) => e.type)).toEqual(['retried', 'retried', 'dead']);
    const [letter] = await queue.deadLetters(topic);
    expect(letter).toMatchObject({ reason: 'failed', attempt: 3 });
    expect(letter.error).toMatch(/^Error: async failure 3/);
    await consumer.close();
  });

  it('dead-letters a MessageRejectedError at once as rejected, attempts left or not, and reports it', async () => {
    expectLogs(/went to the dead letters as rejected/);
    const queue = await fx.service();
    const topic = uniqueTopic();
    const attempts: number[] = [];
    const dead = firstValueFrom(
      queue.events$.pipe(filter((e) => e.topic === topic && (e.type === 'retried' || e.type === 'dead'))),
    );
    const consumer = queue.consume(
      topic,
      (_payload, context) => {
        attempts.push(context.attempt);
        throw new MessageRejectedError('unknown customer', { cause: new Error('lookup said no') });
      },
      { maxAttempts: 5, backoff: { type: 'fixed', delayMs: 10 } },
    );
    const { id } = await queue.push(topic, { customer: 'nobody' });
    await queue.waitUntilIdle(topic);
    expect(attempts).toEqual([1]);
    const event = await dead;
    expect(event).toMatchObject({ type: 'dead', id, attempt: 1 });
    expect(event.error).toBeInstanceOf(MessageRejectedError);
    const [letter] = await queue.deadLetters(topic);
    expect(letter).toMatchObject({ id, reason: 'rejected', attempt: 1, payload: { customer: 'nobody' } });
    expect(letter.error).toMatch(
      /^MessageRejectedError: Message rejected, dead-lettered without a retry: unknown customer\n/,
    );
    expect(loggedLines(/as rejected/).map((l) => [l.level, l.message])).toEqual([
      ['error', `Message ${id} of "${topic}" went to the dead letters as rejected on attempt 1: unknown customer`],
    ]);
    await consumer.close();
  });

  it('does not dead-letter a rejection whose lease was lost meanwhile: fenced like a nack', async () => {
    expectLogs(/Lost the lease of message/);
    const queue = await fx.service();
    const topic = uniqueTopic();
    const proceed = gate();
    const consumer = queue.consume(topic, async () => {
      await proceed.promise;
      throw new MessageRejectedError('too late');
    });
    const lost = firstValueFrom(queue.events$.pipe(filter((e) => e.topic === topic && e.type === 'lease-lost')));
    const { id } = await queue.push(topic, 'x');
    await eventually(() => consumer.running === 1);
    await fx.redis.hset(`{ackq:${topic}}:tokens`, id, 'someone-else');
    proceed.open();
    expect(await lost).toMatchObject({ id });
    expect(await queue.stats(topic)).toMatchObject({ leased: 1, dead: 0 });
    await consumer.close();
  });

  it('runs a handler that takes three leases exactly once, with another consumer waiting', async () => {
    const [a, b] = [await fx.service(), await fx.service()];
    const topic = uniqueTopic();
    // Leases long enough that a loaded machine's stall (a heartbeat comes every third) does not lose one.
    const leaseMs = 1_500;
    let runs = 0;
    const slow = async () => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 3 * leaseMs));
    };
    const consumers = [a.consume(topic, slow, { leaseMs }), b.consume(topic, slow, { leaseMs })];
    await a.push(topic, 'long job');
    await eventually(() => runs === 1);
    await a.waitUntilIdle(topic);
    expect(runs).toBe(1);
    await Promise.all(consumers.map((c) => c.close()));
  });

  it('reports a lost lease: aborts the signal, refuses the late ack, keeps the new lease', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const started = gate<MessageContext>();
    const finish = gate();
    const consumer = queue.consume(
      topic,
      async (_payload, context) => {
        started.open(context);
        await finish.promise;
      },
      { leaseMs: 300 },
    );
    const lost = firstValueFrom(
      queue.events$.pipe(filter((e: RedisAckQueueEvent) => e.topic === topic && e.type === 'lease-lost')),
    );
    const { id } = await queue.push(topic, 'x');
    const context = await started.promise;
    // Another consumer took over (as after a stall past the deadline): its token replaces ours, and
    // its lease lasts the test out (one of 300 ms would expire and be delivered again on a slow machine).
    await fx.redis
      .multi()
      .hset(`{ackq:${topic}}:tokens`, id, 'someone-else')
      .zadd(`{ackq:${topic}}:leased`, Date.now() + 600_000, id)
      .exec();
    expectLogs(/Lost the lease of message/);
    expect(await lost).toMatchObject({ id, type: 'lease-lost' });
    expect(context.signal.reason).toBeInstanceOf(LeaseLostError);
    // And it is logged, once, naming the message and its topic.
    const reported = loggedLines(/Lost the lease/);
    expect(reported).toHaveLength(1);
    expect(reported[0].level).toBe('warn');
    expect(reported[0].message).toContain(`${id} on topic "${topic}"`);
    finish.open();
    await eventually(() => consumer.running === 0);
    expect(await fx.redis.hget(`{ackq:${topic}}:tokens`, id)).toBe('someone-else');
    expect(await queue.stats(topic)).toMatchObject({ leased: 1 });
    await consumer.close();
  });

  it('shares a topic between competing consumers without handling any message twice', async () => {
    const services = [await fx.service(), await fx.service(), await fx.service()];
    const topic = uniqueTopic();
    const handled: string[] = [];
    const consumers = services.map((s) =>
      s.consume(
        topic,
        async (_p, context) => {
          handled.push(context.id);
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
        },
        { concurrency: 8, batchSize: 4 },
      ),
    );
    await services[0].pushMany(
      topic,
      Array.from({ length: 600 }, (_, i) => ({ payload: i })),
    );
    await services[0].waitUntilIdle(topic);
    expect(handled).toHaveLength(600);
    expect(new Set(handled).size).toBe(600);
    await Promise.all(consumers.map((c) => c.close()));
  });

  it('on close: acks what finishes within drainMs, releases the rest at once without counting the attempt', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const quick = gate();
    const started: string[] = [];
    const consumer = queue.consume(
      topic,
      async (payload) => {
        started.push(payload as string);
        if (payload === 'quick') await quick.promise;
        else await new Promise(() => undefined);
      },
      { concurrency: 3 },
    );
    await queue.pushMany(
      topic,
      ['quick', 'stuck-1', 'stuck-2'].map((payload) => ({ payload })),
    );
    await eventually(() => started.length === 3);
    expectLogs(/Released 2 unfinished message\(s\)/);
    const closing = consumer.close(300);
    await queue.push(topic, 'pushed while draining');
    quick.open();
    await closing;
    expect(await queue.stats(topic)).toEqual({ ready: 3, delayed: 0, leased: 0, dead: 0, paused: false });
    // The release is reported: how many, and of which topic.
    const released = loggedLines(/Released/);
    expect(released).toHaveLength(1);
    expect(released[0].level).toBe('warn');
    expect(released[0].message).toMatch(new RegExp(`^Released 2 unfinished message\\(s\\) of "${topic}"`));
    const survivor = await fx.service();
    const next = await survivor.reserve<string>(topic, { count: 3 });
    expect(next.map((m) => [m.payload, m.attempt])).toEqual(
      expect.arrayContaining([
        ['stuck-1', 1],
        ['stuck-2', 1],
        ['pushed while draining', 1],
      ]),
    );
  });

  it('prefetches for fast handlers in order, and hands the prefetched back when a handler stalls', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const seen: number[] = [];
    const stalled = gate();
    // reserve.lua is the only script that pops ready ids: LPOP calls count the reserves that took work.
    const popsBefore = (await commandCounts(fx.redis)).lpop ?? 0;
    const consumer = queue.consume<number>(
      topic,
      async (n) => {
        seen.push(n);
        if (n === 120) await stalled.promise;
      },
      // Heartbeats every 4/3 s: the stalled lease stays live unless its heartbeats come over 2.6 s
      // late (a 600 ms lease expired under a loaded CI run, and stats counted it as ready).
      { concurrency: 1, leaseMs: 4_000 },
    );
    const ids = (
      await queue.pushMany(
        topic,
        Array.from({ length: 200 }, (_, i) => ({ payload: i })),
      )
    ).map((r) => r.id);
    await eventually(() => seen.length === 121);
    // FIFO at concurrency 1, and far fewer reserves than messages: the next ones were local.
    expect(seen).toEqual(Array.from({ length: 121 }, (_, i) => i));
    const pops = ((await commandCounts(fx.redis)).lpop ?? 0) - popsBefore;
    expect(pops).toBeGreaterThan(0);
    expect(pops).toBeLessThan(30);
    // Within two heartbeats the prefetched ones are back in ready, in order; the stalled one stays leased.
    await eventually(async () => (await queue.stats(topic)).leased === 1, 30_000);
    expect(await queue.stats(topic)).toEqual({ ready: 79, delayed: 0, leased: 1, dead: 0, paused: false });
    expect(await fx.redis.lrange(`{ackq:${topic}}:ready`, 0, -1)).toEqual(ids.slice(121));
    // No reserve-and-hand-back churn while the handler stays stalled.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await queue.stats(topic)).toMatchObject({ ready: 79, leased: 1 });
    stalled.open();
    await queue.waitUntilIdle(topic);
    expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => i));
    await consumer.close();
  });

  it('keeps going after handler errors of every kind', async () => {
    expectLogs(/went to the dead letters as failed on attempt 1/);
    const queue = await fx.service();
    const topic = uniqueTopic();
    const seen: number[] = [];
    const consumer = queue.consume<number>(
      topic,
      (n) => {
        seen.push(n);
        if (n % 3 === 0) throw new Error('sync');
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a handler may reject with anything
        if (n % 3 === 1) return Promise.reject('not even an Error');
        return undefined;
      },
      { maxAttempts: 1, concurrency: 4 },
    );
    await queue.pushMany(
      topic,
      Array.from({ length: 30 }, (_, i) => ({ payload: i })),
    );
    await queue.waitUntilIdle(topic);
    expect(seen.sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(await queue.stats(topic)).toMatchObject({ dead: 20 });
    await consumer.close();
  });

  it('wakes at once for a push and at the due time for a delayed message', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const handledAt = new Map<string, number>();
    const consumer = queue.consume<string>(topic, (p) => void handledAt.set(p, Date.now()));
    // Idle: found nothing and blocked in its wait, which the push must end.
    await untilConsumerBlocked(fx.nodes(), topic);
    let pushedAt = Date.now();
    await queue.push(topic, 'now');
    await eventually(() => handledAt.has('now'));
    // Not at the end of the idle wait.
    expect(handledAt.get('now')! - pushedAt).toBeLessThan(wellBefore(DEFAULTS.idleWaitMs));
    pushedAt = Date.now();
    await queue.push(topic, 'later', { delayMs: 700 });
    await eventually(() => handledAt.has('later'));
    const waited = handledAt.get('later')! - pushedAt;
    expect(waited).toBeGreaterThanOrEqual(690);
    expect(waited).toBeLessThan(700 + wellBefore(DEFAULTS.idleWaitMs));
    await consumer.close();
  });

  it('costs an idle topic about one Redis command per second or less', async () => {
    // Only the idle consumer is measured (it counts nothing, so its history sends nothing).
    await fx.closeServices();
    const queue = await fx.service();
    const topic = uniqueTopic();
    const consumer = queue.consume(topic, () => undefined);
    await untilConsumerBlocked(fx.nodes(), topic);
    const startedAt = Date.now();
    const before = await commandCounts(fx.redis);
    // The measurement: what an idle consumer sends over 6 s (more than one 5 s blocking wait).
    await quietFor(6_000, 'an idle consumer sending more than about a command a second');
    const after = await commandCounts(fx.redis);
    const elapsedMs = Date.now() - startedAt;
    const delta = (name: string) => (after[name] ?? 0) - (before[name] ?? 0);
    // Each idle cycle is one blocking wait that lasts the whole idle wait, then one reserve call: a
    // loaded machine stretching the window past a second wait may see two, never one a second.
    const waits = delta('blpop');
    expect(waits).toBeGreaterThanOrEqual(1);
    expect(waits).toBeLessThanOrEqual(Math.floor(elapsedMs / DEFAULTS.idleWaitMs) + 1);
    // What the consumer sends: script calls and blocking waits (commands inside a script are part of it).
    const sent = ['evalsha', 'eval', 'blpop'].reduce((sum, name) => sum + delta(name), 0);
    expect(sent).toBeLessThanOrEqual(2 * waits);
    // Everything Redis ran, the commands inside the scripts included: at most 15 a cycle (two of them
    // the reserve's look at the flow outbox, see flow_repair_due, one its look for start-by
    // deadlines), and the service's bulk runner's look for bulk actions, one per BULK_POLL_MS. Not
    // counted: the test's INFO, replicas' REPLCONF acks and ioredis' CLUSTER SLOTS refreshes (cluster runs).
    const ran = Object.keys(after)
      .filter((name) => !['info', 'replconf', 'cluster|slots', 'cluster'].includes(name))
      .reduce((sum, name) => sum + delta(name), 0);
    expect(ran).toBeLessThanOrEqual(15 * waits + Math.ceil(elapsedMs / BULK_POLL_MS));
    await consumer.close();
  });
});
