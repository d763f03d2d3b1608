import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload } from '@nestjs/microservices';
import type { Redis } from 'ioredis';
import { firstValueFrom } from 'rxjs';
import { RedisAckQueueClient, RedisAckQueueServer } from '../../lib/microservices';
import {
  createEncryptionCodec,
  type Codec,
  type Flow,
  type MessageContext,
  type RedisAckQueueService,
  type PushManyItem,
} from '../../lib';
import { expectLogs } from '../support/capture-logs';
import { eventually, singleServerOnly, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * Issue 42's proof that a codec keeps payloads, headers and results out of Redis: the same text,
 * the canary, goes as payload, header value and handler result through every path that stores
 * one (plain push, group, delay, debounce, flow with child results, keepCompleted, dead letters),
 * everything is consumed, and then every key's DUMP and every AOF file the server wrote (Redis 7's
 * multi-part AOF in appendonlydir/, so every state a value passed through, not only the last) are
 * searched for it. Without a codec the same run must show it, or the search proves nothing.
 */
const CANARY = 'canary-d6f1c9e2-never-stored';

/** No LZF in DUMP (a compressed string would hide the canary from the search without a codec). */
const SERVER = { appendonly: true, config: ['rdbcompression', 'no'] };

@Controller()
class EchoHandlers {
  @MessagePattern('canary.echo')
  echo(@Payload() data: { text: string }) {
    return { echo: `${data.text}!` };
  }
}

@Module({ controllers: [EchoHandlers] })
class EchoModule {}

const key = () => createEncryptionCodec({ keys: { k1: randomBytes(32) }, currentKeyId: 'k1' });

/** The paths of a run and how many messages each stores (a flow counts its parent and 3 children). */
interface Counts {
  plain: number;
  group: number;
  delayed: number;
  debounced: number;
  flows: number;
  dead: number;
}
const FULL: Counts = { plain: 4_000, group: 2_000, delayed: 1_000, debounced: 1_000, flows: 250, dead: 1_000 };
const SMALL: Counts = { plain: 20, group: 20, delayed: 20, debounced: 20, flows: 5, dead: 20 };
const BATCH = 500;

const item = (n: number, extra: Partial<PushManyItem> = {}) =>
  ({ payload: { n, text: CANARY }, headers: { note: CANARY }, ...extra }) as PushManyItem;

async function pushInBatches(queue: RedisAckQueueService, topic: string, items: PushManyItem[]): Promise<void> {
  for (let start = 0; start < items.length; start += BATCH)
    await queue.pushMany(topic, items.slice(start, start + BATCH));
}

/** Pushes `counts` through every path, consumes everything, and checks each handler saw the canary. */
async function everyPath(queue: RedisAckQueueService, counts: Counts): Promise<void> {
  const topic = (name: string) => uniqueTopic(`canary.${name}`);
  const topics = {
    plain: topic('plain'),
    group: topic('group'),
    delayed: topic('delayed'),
    debounced: topic('debounced'),
    parent: topic('parent'),
    child: topic('child'),
    dead: topic('dead'),
  };
  const seen: string[] = [];
  let parents = 0;
  const handler = (payload: { text: string }, context: MessageContext) => {
    seen.push(payload.text === CANARY && context.headers.note === CANARY ? 'ok' : 'not opened');
    return { echo: CANARY };
  };
  for (const name of ['plain', 'group', 'delayed', 'debounced', 'child'] as const)
    queue.consume(topics[name], handler, { concurrency: 50 });
  queue.consume(
    topics.parent,
    (payload: { text: string }, context: MessageContext) => {
      const results = Object.values(context.childResults()[topics.child] ?? {});
      const echoed = results.length === 3 && results.every((r) => (r as { echo?: string }).echo === CANARY);
      seen.push(payload.text === CANARY && echoed ? 'ok' : 'not opened');
      parents++;
      return { echo: CANARY, children: results };
    },
    { concurrency: 50 },
  );
  queue.consume(
    topics.dead,
    () => {
      throw new Error('refused by the test');
    },
    { concurrency: 50, maxAttempts: 1 },
  );

  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  await pushInBatches(
    queue,
    topics.plain,
    range(counts.plain).map((n) => item(n)),
  );
  await pushInBatches(
    queue,
    topics.group,
    range(counts.group).map((n) => item(n, { group: `g${n % 20}` })),
  );
  await pushInBatches(
    queue,
    topics.delayed,
    range(counts.delayed).map((n) => item(n, { delayMs: 50 + (n % 100) })),
  );
  // Two pushes per key: the second gives the pending message its payload (when it has not started).
  const keys = range(counts.debounced / 2);
  for (const round of [0, 1])
    await pushInBatches(
      queue,
      topics.debounced,
      keys.map((n) => item(n + round, { debounce: { key: `k${n}`, delayMs: 20 } })),
    );
  const flow = (n: number): Flow => ({
    topic: topics.parent,
    payload: { n, text: CANARY },
    options: { headers: { note: CANARY } },
    children: [0, 1, 2].map((c) => ({
      topic: topics.child,
      payload: { n: n * 3 + c, text: CANARY },
      options: { headers: { note: CANARY } },
    })),
  });
  for (let start = 0; start < counts.flows; start += 50)
    await Promise.all(range(Math.min(50, counts.flows - start)).map((i) => queue.pushFlow(flow(start + i))));
  await pushInBatches(
    queue,
    topics.dead,
    range(counts.dead).map((n) => item(n)),
  );

  await eventually(() => parents === counts.flows, 120_000, 100);
  await eventually(async () => (await queue.count(topics.dead, 'dead')) === counts.dead, 120_000, 100);
  for (const name of ['plain', 'group', 'delayed', 'debounced', 'child'] as const)
    await queue.waitUntilIdle(topics[name], { timeoutMs: 120_000 });
  expect(seen.filter((s) => s !== 'ok')).toEqual([]);
  // keepCompleted kept every result (the canary in each), and the dead letters their bodies.
  expect(await queue.count(topics.plain, 'completed')).toBe(counts.plain);
}

/** How often the canary's bytes occur in `data`. */
function occurrences(data: Buffer): number {
  let count = 0;
  for (let at = data.indexOf(CANARY); at >= 0; at = data.indexOf(CANARY, at + 1)) count++;
  return count;
}

/** The canary's occurrences in every key's DUMP (SCAN of the whole server) and in every AOF file. */
async function search(redis: Redis, dir: string): Promise<{ keys: number; dumps: number; aof: number }> {
  let keys = 0;
  let dumps = 0;
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const name of found) {
      const dump = await redis.dumpBuffer(name);
      if (dump) dumps += occurrences(dump);
      keys++;
    }
  } while (cursor !== '0');
  const aofDir = join(dir, (await redis.config('GET', 'appenddirname'))[1]);
  const files = readdirSync(aofDir);
  expect(files.some((file) => file.includes('.incr.'))).toBe(true);
  const aof = files.reduce((total, file) => total + occurrences(readFileSync(join(aofDir, file))), 0);
  return { keys, dumps, aof };
}

const { describe: singleDescribe } = singleServerOnly('reads the AOF files of its one server');

singleDescribe('codec canary: nothing of a payload, header or result reaches Redis in clear', () => {
  expectLogs(/went to the dead letters/);

  describe('with an encryption codec', () => {
    const fx = useRedis(SERVER);

    it('10,000 messages through every path leave no trace of the canary in any key or AOF file', async () => {
      const codec: Codec = key();
      const queue = await fx.service({ codec, keepCompleted: { maxCount: 100_000 }, history: false });
      await everyPath(queue, FULL);
      await queue.close();
      const found = await search(fx.redis as Redis, fx.server.dir);
      expect(found.keys).toBeGreaterThan(10);
      expect({ dumps: found.dumps, aof: found.aof }).toEqual({ dumps: 0, aof: 0 });
    }, 600_000);

    it('step results, progress, and transport requests and replies leave no trace of the canary either', async () => {
      const codec = key();
      const queue = await fx.service({ codec, keepCompleted: { maxCount: 100_000 }, history: false });
      const topic = uniqueTopic('canary.steps');
      let done = 0;
      queue.consume(topic, async (_payload: unknown, context: MessageContext) => {
        context.progress({ note: CANARY });
        await context.step('first', () => ({ echo: CANARY }));
        done++;
        return 'ok';
      });
      await queue.pushMany(
        topic,
        [0, 1, 2, 3].map((n) => item(n)),
      );
      await eventually(() => done === 4, 60_000);
      await queue.waitUntilIdle(topic);
      await queue.close();
      // The Nest transport: requests are messages, replies are stored and published whole.
      const prefix = uniqueTopic('canary-transport');
      const server = new RedisAckQueueServer({ connection: fx.connection, prefix, codec: codec });
      const app = await NestFactory.createMicroservice(EchoModule, { strategy: server, logger: false });
      await app.listen();
      const client = new RedisAckQueueClient({ connection: fx.connection, prefix, codec: codec });
      try {
        const replies = await Promise.all(
          Array.from({ length: 50 }, (_, n) =>
            firstValueFrom(client.send<{ echo: string }>('canary.echo', { n, text: CANARY })),
          ),
        );
        expect(replies.every(({ echo }) => echo === `${CANARY}!`)).toBe(true);
      } finally {
        await client.close();
        await app.close();
      }
      const found = await search(fx.redis as Redis, fx.server.dir);
      expect({ dumps: found.dumps, aof: found.aof }).toEqual({ dumps: 0, aof: 0 });
    }, 120_000);
  });

  describe('without a codec (the control: the search finds what is there)', () => {
    const fx = useRedis(SERVER);

    it('the same paths leave the canary in the keys and in the AOF', async () => {
      const queue = await fx.service({ keepCompleted: { maxCount: 100_000 }, history: false });
      await everyPath(queue, SMALL);
      await queue.close();
      const found = await search(fx.redis as Redis, fx.server.dir);
      expect(found.dumps).toBeGreaterThan(0);
      expect(found.aof).toBeGreaterThan(0);
    }, 120_000);
  });
});
