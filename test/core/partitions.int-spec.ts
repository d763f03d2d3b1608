import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { PartitionCountMismatchError, QueueHandler, RedisAckQueueModule, type RedisAckQueueService } from '../../lib';
import { partitionOf, partitionTags } from '../../lib/engine/keys/partitions';
import { expectLogs, testLogger } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** Ids that land in each partition: `perPartition` of them for each of `count`. */
function idsByPartition(count: number, perPartition: number): string[][] {
  const ids: string[][] = Array.from({ length: count }, () => []);
  for (let i = 0; ids.some((list) => list.length < perPartition); i++) {
    const list = ids[partitionOf(`m-${i}`, count)];
    if (list.length < perPartition) list.push(`m-${i}`);
  }
  return ids;
}

describe('partitioned topics', () => {
  const fx = useRedis();
  const PARTITIONS = 4;

  async function partitioned(topic: string, options = {}): Promise<RedisAckQueueService> {
    return fx.service({ topics: { [topic]: { partitions: PARTITIONS } }, ...options });
  }

  /** Ready ids per partition, read straight from Redis. */
  function readyByPartition(topic: string): Promise<number[]> {
    return Promise.all(partitionTags('ackq', topic, PARTITIONS).map((tag) => fx.redis.llen(`{${tag}}:ready`)));
  }

  /** CLIENT LIST lines of every server. */
  async function clientList(): Promise<string[]> {
    const lists = await Promise.all(fx.nodes().map((node) => node.client('LIST')));
    return lists.flatMap((list) => String(list).split('\n'));
  }

  it('spreads pushes over every partition by id, and deduplicates an id across pushes', async () => {
    const topic = uniqueTopic();
    const queue = await partitioned(topic);
    const results = await queue.pushMany(
      topic,
      Array.from({ length: 200 }, (_, i) => ({ payload: i, id: `order-${i}` })),
    );
    expect(results.every((r) => !r.duplicate)).toBe(true);
    const counts = await readyByPartition(topic);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(200);
    expect(counts.every((n) => n > 20)).toBe(true);
    // A second service (another producer) routes the same id to the same partition.
    const other = await partitioned(topic);
    expect(await other.push(topic, 'again', { id: 'order-7' })).toEqual({ id: 'order-7', duplicate: true });
    expect(await other.stats(topic)).toEqual({ ready: 200, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('gives every partition its turn: a deep partition cannot starve the others', async () => {
    const topic = uniqueTopic();
    const queue = await partitioned(topic);
    const ids = idsByPartition(PARTITIONS, 5);
    // Partition 0 filled first and fullest would starve the others in a FIFO over one list.
    for (const list of ids)
      await queue.pushMany(
        topic,
        list.map((id) => ({ id, payload: id })),
      );
    const order: number[] = [];
    // Turns are per reserve: with batchSize 1 every message is a turn of its own.
    const consumer = queue.consume(topic, (_payload, { id }) => void order.push(partitionOf(id, PARTITIONS)), {
      concurrency: 1,
      batchSize: 1,
    });
    await queue.waitUntilIdle(topic);
    await consumer.close();
    expect(order).toHaveLength(20);
    // At every point the partitions were served within one turn of each other (two: the replies
    // of two overlapping reserves to different masters may arrive in either order).
    const served = new Array<number>(PARTITIONS).fill(0);
    for (const partition of order) {
      served[partition]++;
      expect(Math.max(...served) - Math.min(...served)).toBeLessThanOrEqual(2);
    }
  });

  it('wakes an idle consumer for a push to any partition, with one blocking connection', async () => {
    const topic = uniqueTopic();
    const queue = await partitioned(topic);
    const seen: { id: string; at: number }[] = [];
    const consumer = queue.consume(topic, (_payload, { id }) => void seen.push({ id, at: Date.now() }));
    // Let it go idle: every partition reserved empty, blocked on the home wake list.
    // Blocked (flags=b) connections of this consumer, on every server.
    const blocking = async () =>
      (await clientList()).filter((line) => line.includes(`name=ackq:${topic}`) && / flags=b /.test(line));
    await eventually(async () => (await blocking()).length > 0);
    const blocked = await blocking();
    expect(blocked).toHaveLength(1);
    for (const [partition, [id]] of idsByPartition(PARTITIONS, 1).entries()) {
      const pushedAt = Date.now();
      await queue.push(topic, partition, { id });
      await eventually(() => seen.some((s) => s.id === id), 10_000, 5);
      // Well inside the 5 s idle bound: the push woke the consumer; no poll found it.
      expect(seen.find((s) => s.id === id)!.at - pushedAt).toBeLessThan(2_000);
    }
    await consumer.close();
  });

  it('delivers delayed messages and retries from every partition on time', async () => {
    expectLogs(/failed on attempt 1 of 5: Error: once/);
    const topic = uniqueTopic();
    const queue = await partitioned(topic, { backoff: { type: 'fixed', delayMs: 200 } });
    const attempts = new Map<string, number>();
    const consumer = queue.consume(topic, (_payload, { id, attempt }) => {
      attempts.set(id, attempt);
      if (attempt === 1 && id.endsWith('retry')) throw new Error('once');
    });
    const ids = idsByPartition(PARTITIONS, 1).flat();
    await queue.pushMany(
      topic,
      ids.map((id) => ({ id, payload: 1, delayMs: 300 })),
    );
    await queue.pushMany(
      topic,
      ids.map((id) => ({ id: `${id}-retry`, payload: 1 })),
    );
    await eventually(
      () => attempts.size === ids.length * 2 && [...attempts.values()].filter((a) => a === 2).length === ids.length,
      4_000,
    );
    await queue.waitUntilIdle(topic);
    await consumer.close();
  });

  it('sums stats and pages dead letters over partitions, oldest first', async () => {
    const topic = uniqueTopic();
    const queue = await partitioned(topic);
    const ids = idsByPartition(PARTITIONS, 2).flat();
    for (const id of ids) {
      await queue.push(topic, id, { id, maxAttempts: 1 });
      const [message] = await queue.reserve(topic);
      await queue.nack(message, { error: new Error(`bad ${message.id}`) });
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 8, paused: false });
    const all = await queue.deadLetters(topic);
    expect(all.map((d) => d.deadAt)).toEqual([...all.map((d) => d.deadAt)].sort((a, b) => a - b));
    expect(new Set(all.map((d) => d.id))).toEqual(new Set(ids));
    const page = await queue.deadLetters(topic, { offset: 2, limit: 3 });
    expect(page.map((d) => d.id)).toEqual(all.slice(2, 5).map((d) => d.id));
    expect(await queue.requeueDead(topic, [all[0].id, all[5].id])).toBe(2);
    expect(await queue.purgeDead(topic)).toBe(6);
    expect(await queue.stats(topic)).toEqual({ ready: 2, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('refuses a process whose partition count differs from the topic’s, and changes nothing', async () => {
    const topic = uniqueTopic();
    const queue = await partitioned(topic);
    await queue.push(topic, 'first');
    const unpartitioned = await fx.service();
    await expect(unpartitioned.push(topic, 'lost?')).rejects.toBeInstanceOf(PartitionCountMismatchError);
    await expect(unpartitioned.reserve(topic)).rejects.toMatchObject({
      code: 'PARTITION_COUNT_MISMATCH',
      configured: 1,
      stored: 4,
    });
    const eight = await fx.service({ topics: { [topic]: { partitions: 8 } } });
    await expect(eight.push(topic, 'lost?')).rejects.toThrow(/has 4 partition\(s\) in Redis but 8/);
    expect(await queue.stats(topic)).toEqual({ ready: 1, delayed: 0, leased: 0, dead: 0, paused: false });
  });

  it('rejects a bad partitions option with a typed error', async () => {
    for (const partitions of [0, 1.5, 257, '4']) {
      await expect(fx.service({ topics: { orders: { partitions: partitions as number } } })).rejects.toMatchObject({
        code: 'INVALID_OPTION',
      });
    }
    await expect(fx.service({ topics: { 'bad topic': { partitions: 2 } } })).rejects.toMatchObject({
      code: 'INVALID_TOPIC',
    });
  });
});

describe('partitioned topics in the Nest module', () => {
  const fx = useRedis();

  it('fails startup when a handler’s topic has another partition count in Redis', async () => {
    const topic = uniqueTopic();
    const producer = await fx.service({ topics: { [topic]: { partitions: 3 } } });
    await producer.push(topic, 'x');
    @Injectable()
    class Handlers {
      @QueueHandler(topic)
      handle(): void {}
    }
    @Module({ imports: [RedisAckQueueModule.forRoot({ connection: fx.connection })], providers: [Handlers] })
    class AppModule {}
    expectLogs(/PartitionCountMismatchError/);
    const starting = NestFactory.createApplicationContext(AppModule, { logger: testLogger(), abortOnError: false });
    await expect(starting).rejects.toBeInstanceOf(PartitionCountMismatchError);
    expect(await producer.stats(topic)).toEqual({ ready: 1, delayed: 0, leased: 0, dead: 0, paused: false });
  });
});
