import type { QueueEngine } from '../../lib/engine/queue-engine';
import {
  InvalidOptionError,
  InvalidStepResultError,
  LeaseLostError,
  type BatchMessage,
  type MessageContext,
  type RedisAckQueueEvent,
} from '../../lib';
import { gate } from '../support/gate';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** Retries at once: these tests wait for the redelivery, not for a backoff. */
const AT_ONCE = { backoff: { type: 'fixed', delayMs: 0 } } as const;

/** What a promise settled with: its value, or the class of its error. */
async function outcome(work: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await work };
  } catch (error) {
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
}

describe('durable steps (context.step)', () => {
  const fx = useRedis();

  /** The steps keys of a topic (its partitions' too) on every server, found with SCAN. */
  async function stepKeys(topic: string): Promise<string[]> {
    const found = new Set<string>();
    for (const node of fx.nodes()) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `{ackq:${topic}[}#]*:step*`, 'COUNT', 1000);
        cursor = next;
        keys.forEach((key) => found.add(key));
      } while (cursor !== '0');
    }
    return [...found].sort();
  }

  it.each([1, 3])(
    'runs a step once: the redelivery after a failed attempt gets its stored result back (%i partition(s))',
    async (partitions) => {
      const topic = uniqueTopic('steps');
      const queue = await fx.service({ topics: { [topic]: { partitions } } });
      const runs: string[] = [];
      const seen: unknown[] = [];
      const consumer = queue.consume(
        topic,
        async (_payload, context) => {
          const stock = await context.step('reserve-stock', () => {
            runs.push(`stock ${context.attempt}`);
            return { reserved: 3, at: new Date(0) };
          });
          const charge = await context.step('charge', async () => {
            runs.push(`charge ${context.attempt}`);
            return Promise.resolve('ch_1');
          });
          seen.push({ attempt: context.attempt, stock, charge });
          if (context.attempt === 1) throw new Error('fails after its steps');
        },
        AT_ONCE,
      );
      await queue.push(topic, 'order', { id: 'm1', ...(partitions > 1 && { group: 'customer-7' }) });
      await eventually(() => seen.length === 2);
      await queue.waitUntilIdle(topic);
      await consumer.close();

      expect(runs).toEqual(['stock 1', 'charge 1']);
      // Every delivery, the first included, gets the result as JSON gives it back.
      const stock = { reserved: 3, at: '1970-01-01T00:00:00.000Z' };
      expect(seen).toEqual([
        { attempt: 1, stock, charge: 'ch_1' },
        { attempt: 2, stock, charge: 'ch_1' },
      ]);
      expect(await stepKeys(topic)).toEqual([]);
    },
  );

  it('skips a stored step after a retryLater, and keeps undefined and null results apart', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    const runs: string[] = [];
    const seen: unknown[] = [];
    const looked = gate();
    const lookedAt = gate<unknown>();
    let deliveries = 0;
    const consumer = queue.consume(topic, async (_payload, context) => {
      deliveries++;
      const nothing = await context.step('nothing', () => void runs.push(`nothing ${deliveries}`));
      const none = await context.step('none', () => (runs.push(`none ${deliveries}`), null));
      seen.push({ delivery: deliveries, attempt: context.attempt, nothing, none, has: 'nothing' in { nothing } });
      if (deliveries === 1) {
        lookedAt.open(await queue.get(topic, context.id));
        await looked.promise;
        context.retryLater(0);
      }
    });
    await queue.push(topic, 'x', { id: 'r1' });
    const info = (await lookedAt.promise) as { state: string; steps: Record<string, unknown> };
    expect(info.state).toBe('leased');
    expect(info.steps).toEqual({ nothing: undefined, none: null });
    expect(Object.keys(info.steps).sort()).toEqual(['none', 'nothing']);
    looked.open();
    await eventually(() => seen.length === 2);
    await queue.waitUntilIdle(topic);
    await consumer.close();

    expect(runs).toEqual(['nothing 1', 'none 1']);
    // retryLater counts no attempt: the same attempt, its steps not run again.
    expect(seen).toEqual([
      { delivery: 1, attempt: 1, nothing: undefined, none: null, has: true },
      { delivery: 2, attempt: 1, nothing: undefined, none: null, has: true },
    ]);
    expect(await stepKeys(topic)).toEqual([]);
  });

  it('refuses the step of a delivery whose lease expired, keeping what the current one stored', async () => {
    const topic = uniqueTopic('steps');
    // Heartbeats every 40 s: the lease the first handler shortens expires long before one.
    const first = await fx.service({ leaseMs: 120_000 });
    const second = await fx.service({ leaseMs: 120_000 });
    const events: RedisAckQueueEvent[] = [];
    first.events$.subscribe((event) => event.topic === topic && events.push(event));
    const expired = gate<MessageContext>();
    const secondStored = gate();
    const firstTried = gate<unknown[]>();
    const ranInSecond: string[] = [];

    const stale = first.consume(topic, async (_payload, context) => {
      await context.step('a', () => 'a from the first');
      // The lease ends 10 ms from now; its next heartbeat is 40 s away.
      await context.extendLease(10);
      expired.open(context);
      await secondStored.promise;
      firstTried.open([
        await outcome(context.step('b', () => 'b from the first')),
        await outcome(context.step('c', () => 'c from the first')),
      ]);
    });
    await first.push(topic, 'x', { id: 'e1' });
    await expired.promise;

    const finish = gate();
    const current = second.consume(topic, async (_payload, context) => {
      const a = await context.step('a', () => void ranInSecond.push('a'));
      const b = await context.step('b', () => 'b from the second');
      ranInSecond.push(`attempt ${context.attempt}: ${String(a)}, ${b}`);
      secondStored.open();
      await finish.promise;
    });
    const tried = await firstTried.promise;
    expect(tried[0]).toMatchObject({ error: LeaseLostError.name });
    expect(tried[1]).toMatchObject({ error: LeaseLostError.name });
    expect(ranInSecond).toEqual(['attempt 2: a from the first, b from the second']);
    // The late delivery changed nothing: the current one's steps stand, and no `c`.
    expect((await second.get(topic, 'e1'))?.steps).toEqual({ a: 'a from the first', b: 'b from the second' });
    expect(events.filter((event) => event.type === 'lease-lost')).toHaveLength(1);

    finish.open();
    await second.waitUntilIdle(topic);
    await Promise.all([stale.close(), current.close()]);
    expect(await second.get(topic, 'e1')).toBeNull();
    expect(await stepKeys(topic)).toEqual([]);
  });

  it('stores a step only under the current lease, keeps the first result of a name, and at most 100 steps', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    const engine = (queue as unknown as { core: { engine: QueueEngine } }).core.engine;
    await queue.push(topic, 'x', { id: 's1' });
    const [message] = await queue.reserve(topic);

    expect(await engine.storeStep(topic, message, 'x', '1')).toEqual({ outcome: 'stored' });
    expect(await engine.storeStep(topic, message, 'x', '2')).toEqual({ outcome: 'kept', json: '1' });
    expect(await engine.storeStep(topic, { ...message, token: 'stale.1' }, 'y', '3')).toEqual({ outcome: 'lost' });
    for (let i = 1; i < 100; i++) await engine.storeStep(topic, message, `n${i}`, '0');
    expect(await engine.storeStep(topic, message, 'one too many', '0')).toEqual({ outcome: 'full' });
    expect(await engine.readSteps(topic, { ...message, token: 'stale.1' })).toBeUndefined();
    const steps = (await engine.readSteps(topic, message))!;
    expect(steps.size).toBe(100);
    expect(steps.get('x')).toBe('1');
    expect(steps.has('y')).toBe(false);

    expect(await queue.ack(message)).toBe(true);
    expect(await stepKeys(topic)).toEqual([]);
  });

  it('refuses bad results and names with typed errors, storing nothing and never quoting the value', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    const ran: string[] = [];
    const tried = gate<Record<string, unknown>>();
    const finish = gate();
    const run = (name: string, value: unknown) => () => (ran.push(name), value);
    const secret = 'SECRET-'.repeat(10_000);
    const cyclic: Record<string, unknown> = { name: 'SECRET' };
    cyclic.self = cyclic;
    const consumer = queue.consume(topic, async (_payload, context) => {
      tried.open({
        fn: await outcome(
          context.step(
            'fn',
            run('fn', () => 1),
          ),
        ),
        bigint: await outcome(context.step('bigint', run('bigint', 10n))),
        cycle: await outcome(context.step('cycle', run('cycle', cyclic))),
        large: await outcome(context.step('large', run('large', { text: secret }))),
        empty: await outcome(context.step('', run('empty', 1))),
        long: await outcome(context.step('n'.repeat(257), run('long', 1))),
        number: await outcome(context.step(42 as unknown as string, run('number', 1))),
        // UTF-8 cannot carry an unpaired surrogate: both would reach Redis as `charge-\uFFFD`, one step.
        high: await outcome(context.step('charge-\uD800', run('high', 1))),
        low: await outcome(context.step('charge-\uDBFF', run('low', 2))),
        notFn: await outcome(context.step('not-fn', 'value' as unknown as () => string)),
        ok: await outcome(context.step('n'.repeat(256), run('ok', 'fine'))),
      });
      await finish.promise;
    });
    await queue.push(topic, 'x', { id: 'b1' });
    const results = await tried.promise;
    for (const name of ['fn', 'bigint', 'cycle', 'large']) {
      expect(results[name]).toMatchObject({ error: InvalidStepResultError.name });
      expect((results[name] as { message: string }).message).not.toMatch(/SECRET/);
    }
    expect((results.large as { message: string }).message).toMatch(/over the limit of 65536/);
    for (const name of ['empty', 'long', 'number', 'high', 'low', 'notFn'])
      expect(results[name]).toMatchObject({ error: InvalidOptionError.name });
    expect(results.ok).toEqual({ value: 'fine' });
    // A bad name runs nothing; a bad result ran its step, but nothing of it was stored.
    expect(ran).toEqual(['fn', 'bigint', 'cycle', 'large', 'ok']);
    expect((await queue.get(topic, 'b1'))?.steps).toEqual({ ['n'.repeat(256)]: 'fine' });
    finish.open();
    await queue.waitUntilIdle(topic);
    await consumer.close();
  });

  it('runs nothing past 100 steps of one message, and shares one run between two calls of a name', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    const done = gate<unknown>();
    let runs = 0;
    const consumer = queue.consume(topic, async (_payload, context) => {
      const twice = await Promise.all([context.step('shared', () => ++runs), context.step('shared', () => ++runs)]);
      for (let i = 1; i < 100; i++) await context.step(`s${i}`, () => i);
      done.open({ twice, over: await outcome(context.step('s100', () => ++runs)) });
    });
    await queue.push(topic, 'x', { id: 'c1' });
    const result = (await done.promise) as { twice: number[]; over: { error: string; message: string } };
    expect(result.twice).toEqual([1, 1]);
    expect(result.over).toMatchObject({ error: InvalidStepResultError.name });
    expect(result.over.message).toMatch(/holds 100 steps already/);
    expect(runs).toBe(1);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect(await stepKeys(topic)).toEqual([]);
  });

  it.each(['an ack', 'an ack after progress'])('deletes the steps with the message on %s', async (how) => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    const stepped = gate();
    const finish = gate();
    const consumer = queue.consume(topic, async (_payload, context) => {
      await context.step('one', () => 1);
      // With progress, the ack goes through complete.lua (not along with a reserve).
      if (how !== 'an ack') context.progress({ done: 1 });
      stepped.open();
      await finish.promise;
    });
    await queue.push(topic, 'x', { id: 'a1' });
    await queue.push(topic, 'y', { id: 'a2' });
    await stepped.promise;
    expect(await stepKeys(topic)).toEqual([`{ackq:${topic}}:step-ids`, `{ackq:${topic}}:steps:a1`]);
    finish.open();
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect(await stepKeys(topic)).toEqual([]);
  });

  it('deletes the steps of a cancelled message', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    const stepped = gate();
    const consumer = queue.consume(topic, async (_payload, context) => {
      await context.step('one', () => 1);
      stepped.open();
      await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
    });
    await queue.push(topic, 'x', { id: 'x1' });
    await stepped.promise;
    expect(await stepKeys(topic)).toHaveLength(2);
    expect(await queue.cancel(topic, 'x1')).toBe('leased');
    expect(await stepKeys(topic)).toEqual([]);
    await eventually(() => consumer.running === 0);
    await consumer.close();
  });

  it('keeps the steps of a dead letter, resumes them after a requeue', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    const runs: string[] = [];
    let deliveries = 0;
    const consumer = queue.consume(
      topic,
      async (_payload, context) => {
        deliveries++;
        await context.step('one', () => runs.push(`one ${deliveries}`));
        await context.step('two', () => runs.push(`two ${deliveries}`));
        if (deliveries === 1) throw new Error('dies after its steps');
      },
      { maxAttempts: 1 },
    );
    await queue.push(topic, 'x', { id: 'd1' });
    await eventually(async () => (await queue.get(topic, 'd1'))?.state === 'dead');
    expect((await queue.get(topic, 'd1'))?.steps).toEqual({ one: 1, two: 2 });
    expect(await queue.requeueDead(topic, ['d1'])).toBe(1);
    await eventually(() => deliveries === 2);
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect(runs).toEqual(['one 1', 'two 1']);
    expect(await stepKeys(topic)).toEqual([]);
  });

  it('deletes the steps of dead letters purged, or trimmed beyond deadLetters.maxCount', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service({ deadLetters: { maxCount: 2 } });
    const consumer = queue.consume(
      topic,
      async (_payload, context) => {
        await context.step('one', () => context.id);
        throw new Error('dies');
      },
      { maxAttempts: 1 },
    );
    for (const id of ['p1', 'p2']) {
      await queue.push(topic, id, { id });
      await eventually(async () => (await queue.get(topic, id))?.state === 'dead');
    }
    const keysOf = (ids: string[]) => [`{ackq:${topic}}:step-ids`, ...ids.map((id) => `{ackq:${topic}}:steps:${id}`)];
    expect(await stepKeys(topic)).toEqual(keysOf(['p1', 'p2']));
    // A third death trims the oldest letter beyond maxCount 2, with its steps.
    await queue.push(topic, 'p3', { id: 'p3' });
    await eventually(async () => (await queue.get(topic, 'p3'))?.state === 'dead');
    expect(await queue.get(topic, 'p1')).toBeNull();
    expect(await stepKeys(topic)).toEqual(keysOf(['p2', 'p3']));
    expect(await queue.purgeDead(topic, ['p2'])).toBe(1);
    expect(await stepKeys(topic)).toEqual(keysOf(['p3']));
    expect(await queue.purgeDead(topic)).toBe(1);
    expect(await stepKeys(topic)).toEqual([]);
    await consumer.close();
  });

  it('keeps the steps with a completed record, and deletes them when the record goes', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service({ topics: { [topic]: { keepCompleted: { maxCount: 1 } } } });
    const consumer = queue.consume(topic, async (_payload, context) => context.step('id', () => context.id));
    await queue.push(topic, 'x', { id: 'k1' });
    await eventually(async () => (await queue.get(topic, 'k1'))?.state === 'completed');
    expect(await queue.get(topic, 'k1')).toMatchObject({ state: 'completed', result: 'k1', steps: { id: 'k1' } });
    // A second completed record trims the first (maxCount 1), with its steps.
    await queue.push(topic, 'y', { id: 'k2' });
    await eventually(async () => (await queue.get(topic, 'k2'))?.state === 'completed');
    expect(await queue.get(topic, 'k1')).toBeNull();
    expect(await stepKeys(topic)).toEqual([`{ackq:${topic}}:step-ids`, `{ackq:${topic}}:steps:k2`]);
    expect(await queue.cancel(topic, 'k2')).toBe('completed');
    expect(await stepKeys(topic)).toEqual([]);
    await consumer.close();
  });

  it('gives each message of a batch its own steps', async () => {
    const topic = uniqueTopic('steps');
    const queue = await fx.service();
    const runs: string[] = [];
    const calls: string[][] = [];
    const consumer = queue.consume(
      topic,
      async (messages: BatchMessage<string>[], context) => {
        calls.push(messages.map((m) => `${m.id}@${m.attempt}`));
        for (const message of messages) {
          const value = await message.step('double', () => (runs.push(`${message.id}@${message.attempt}`), message.id));
          if (value !== message.id) throw new Error('a step of another message');
          if (message.id === 'b2' && message.attempt === 1) context.fail(message, new Error('retry this one'));
        }
      },
      { batch: { maxSize: 3, maxWaitMs: 50 }, ...AT_ONCE },
    );
    await queue.pushMany(
      topic,
      ['b1', 'b2', 'b3'].map((id) => ({ id, payload: id })),
    );
    await eventually(() => calls.flat().includes('b2@2'));
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect(runs.sort()).toEqual(['b1@1', 'b2@1', 'b3@1']);
    expect(await stepKeys(topic)).toEqual([]);
  });
});
