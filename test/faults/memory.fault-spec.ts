import type { Redis } from 'ioredis';
import type { RedisAckQueueService } from '../../lib';
import { FaultLedger, NOTHING_LEFT, leftovers, printSummary } from '../support/fault-ledger';
import { eventually, isHistoryKey, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * Phases of push/reserve/ack cycles (then consumed messages), Redis measured after each. A leak
 * grows with every phase; noise does not: what is checked is the growth per cycle from the second
 * phase's end (allocator and Redis' tables settled: the first phase still grows them by ~12 KB)
 * to the last's. Was 200,000 cycles compared once, before and after (169 s).
 */
const PHASES = 4;
const CYCLES_PER_PHASE = 10_000;
const CONSUMED_PER_PHASE = 2_000;
const BATCH = 500;

/** The whole keyspace: key names with their type and size (HLEN, ZCARD, LLEN, STRLEN). */
async function keyspace(redis: Redis): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const key of (await redis.keys('*')).sort()) {
    const type = await redis.type(key);
    const size =
      type === 'hash'
        ? await redis.hlen(key)
        : type === 'zset'
          ? await redis.zcard(key)
          : type === 'list'
            ? await redis.llen(key)
            : type === 'string'
              ? 'value'
              : type;
    result[key] = `${type}:${size}`;
  }
  return result;
}

/** used_memory (every live allocation) and used_memory_dataset (without client buffers and tables; noisy). */
async function usedMemory(redis: Redis): Promise<{ total: number; dataset: number; clients: number }> {
  const info = await redis.info('memory');
  const field = (name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  // Client buffers (query and output buffers of whichever connections are open at the time) are
  // not the queue's data: they come and go with the consumers each phase starts and closes.
  const clients = field('mem_clients_normal') + field('mem_clients_slaves');
  return { total: field('used_memory') - clients, dataset: field('used_memory_dataset'), clients };
}

/**
 * Leaves out what changes with time, not with messages: the wake key (at most one token, present
 * or not depending on who popped last) and the history (a field a minute, checked on its own).
 */
function withoutTimeKeyed(keys: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(keys).filter(([key]) => !key.endsWith(':wake') && !isHistoryKey(key)));
}

/** `n` messages through a consumer (the poller's own bookkeeping: heartbeats, batched acks). */
async function consume(queue: RedisAckQueueService, topic: string, n: number, ledger?: FaultLedger): Promise<void> {
  const consumer = queue.consume(
    topic,
    (_payload, context) => void ledger?.start('poller', context.id, context.attempt),
    { concurrency: 16 },
  );
  const subscription = ledger?.follow(queue, 'poller', topic);
  try {
    const results = await queue.pushMany(
      topic,
      Array.from({ length: n }, (_, i) => ({ payload: i })),
    );
    ledger?.pushedIds(results.map((r) => r.id));
    await queue.waitUntilIdle(topic, { timeoutMs: 30_000 });
  } finally {
    await consumer.close();
    subscription?.unsubscribe();
  }
}

/** `n` push / reserve / ack cycles through the public API, in batches. */
async function cycle(queue: RedisAckQueueService, topic: string, n: number, ledger?: FaultLedger): Promise<void> {
  for (let done = 0; done < n; done += BATCH) {
    const results = await queue.pushMany(
      topic,
      Array.from({ length: Math.min(BATCH, n - done) }, (_, i) => ({ payload: { i, pad: 'p'.repeat(64) } })),
    );
    ledger?.pushedIds(results.map((r) => r.id));
    let left = results.length;
    while (left > 0) {
      const messages = await queue.reserve(topic, { count: left, leaseMs: 60_000 });
      messages.forEach((m) => ledger?.start('api', m.id, m.attempt));
      const acked = await Promise.all(messages.map((m) => queue.ack(m)));
      messages.forEach((m, i) => acked[i] && ledger?.acked('api', m.id, m.attempt));
      left -= messages.length;
    }
  }
}

describe('fault: a long run leaves Redis memory flat', () => {
  const fx = useRedis();

  it(`${PHASES} × ${CYCLES_PER_PHASE} push/reserve/ack cycles leave no key, no hash field and no memory behind`, async () => {
    const topic = uniqueTopic('memory');
    const queue = await fx.service();
    // Warm up: scripts loaded, keys that stay (the token counter) created, allocator settled.
    await cycle(queue, topic, 5_000);
    await consume(queue, topic, 5_000);
    // The whole keyspace and memory of the one server: a plain client of it.
    const redis = fx.server.client();
    // The history hash, written by the recorder's first flush, is in both counts of keys below.
    await eventually(() => redis.exists(`{ackq:${topic}}:history`));
    await redis.call('MEMORY', 'PURGE');
    const keysBefore = await keyspace(redis);
    const dbsizeBefore = await redis.dbsize();

    const ledger = new FaultLedger();
    const startedAt = Date.now();
    const memory: { total: number; dataset: number }[] = [];
    for (let phase = 0; phase < PHASES; phase++) {
      await cycle(queue, topic, CYCLES_PER_PHASE, ledger);
      await consume(queue, topic, CONSUMED_PER_PHASE, ledger);
      await redis.call('MEMORY', 'PURGE');
      memory.push(await usedMemory(redis));
      // Nothing left after any phase, exactly.
      expect(withoutTimeKeyed(await keyspace(redis))).toEqual(withoutTimeKeyed(keysBefore));
    }
    const elapsedMs = Date.now() - startedAt;

    const keysAfter = await keyspace(redis);
    const dbsizeAfter = await redis.dbsize();
    const cycles = PHASES * (CYCLES_PER_PHASE + CONSUMED_PER_PHASE);
    const tally = ledger.tally({ leftInRedis: await fx.redis.hkeys(`{ackq:${topic}}:messages`) });
    printSummary('memory-flat', tally, { cycles, elapsedMs, memory, keysAfter, ...ledger.counters() });
    expect(tally.violations).toEqual([]);
    expect(tally.handled).toBe(cycles);
    expect(tally.duplicates).toBe(0);
    expect(withoutTimeKeyed(keysAfter)).toEqual(withoutTimeKeyed(keysBefore));
    expect(
      Object.keys(keysAfter)
        .filter((key) => key.endsWith(':wake'))
        .map((key) => keysAfter[key]),
    ).not.toContain('list:2');
    // The wake key comes and goes with who popped last (see withoutTimeKeyed): counted apart.
    const wakeKeys = (keys: Record<string, string>) => Object.keys(keys).filter((key) => key.endsWith(':wake')).length;
    expect(dbsizeAfter - wakeKeys(keysAfter)).toBe(dbsizeBefore - wakeKeys(keysBefore));
    // The history grows by a field a minute, not by message: at most one per minute of the run.
    const historyFields = Number(keysAfter[`{ackq:${topic}}:history`].split(':')[1]);
    expect(historyFields).toBeLessThanOrEqual(Math.ceil((Date.now() - startedAt) / 60_000) + 2);
    expect(await leftovers(fx.redis, topic)).toEqual(NOTHING_LEFT);
    // From the second phase's end to the last's: under 8 bytes per cycle (the allocator's noise
    // between phases, client buffers left out, is ±20 KB here; CI once saw 99 KB with them in),
    // where one leftover field per message (~100 bytes) or a script cached per call would be
    // megabytes. Leftover keys and fields are caught exactly by the keyspace checks above.
    const measured = (PHASES - 2) * (CYCLES_PER_PHASE + CONSUMED_PER_PHASE);
    console.log(
      `memory-flat: used memory less client buffers after each phase: ${memory.map((m) => m.total).join(', ')} B`,
    );
    expect(memory[PHASES - 1].total - memory[1].total).toBeLessThan(8 * measured);
  }, 240_000);
});
