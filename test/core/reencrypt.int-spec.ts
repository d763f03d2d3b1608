import { randomBytes } from 'node:crypto';
import {
  createEncryptionCodec,
  ReencryptWithoutCodecError,
  type BulkStatus,
  type Codec,
  type RedisAckQueueService,
} from '../../lib';
import { describeSealed, openText } from '../../lib/codecs/sealed-text';
import { partitionTags } from '../../lib/engine/keys/partitions';
import { eventually, uniqueTopic, useRedis, type TestClient } from '../support/queue-fixture';

const keys = { v0: randomBytes(32), v1: randomBytes(32), v2: randomBytes(32) };
const codecOf = (ids: (keyof typeof keys)[], currentKeyId: keyof typeof keys): Codec =>
  createEncryptionCodec({ keys: Object.fromEntries(ids.map((id) => [id, keys[id]])), currentKeyId });

/** Every text a stored value holds that a codec seals (or would): sealed ones as they are, plain ones as 'plain'. */
function sealableTexts(stored: string): string[] {
  if (!stored.startsWith('{')) return ['plain'];
  const value = JSON.parse(stored) as { c?: number; b?: string; s?: string; r?: unknown; e?: string; p?: unknown };
  if (value.c !== undefined) {
    const texts = value.b === undefined ? [] : sealableTexts(value.b);
    if (value.s !== undefined) texts.push(value.s);
    if ('r' in value) texts.push('plain');
    return texts;
  }
  return value.e !== undefined ? [value.e] : ['plain'];
}

/** The key id of every sealable text stored for `topic` (undefined for a plain one), by message id. */
async function storedKeyIds(
  redis: TestClient,
  topic: string,
  prefix = 'ackq',
): Promise<Map<string, (string | undefined)[]>> {
  const all = await redis.hgetall(`{${prefix}:${topic}}:messages`);
  return new Map(
    Object.entries(all).map(([id, stored]) => [
      id,
      sealableTexts(stored).map((text) => (text === 'plain' ? undefined : describeSealed(text).keyId)),
    ]),
  );
}

async function finished(queue: RedisAckQueueService, id: string): Promise<BulkStatus> {
  const status = await eventually(
    async () => {
      const status = await queue.bulkStatus(id);
      return status?.state === 'done' ? status : undefined;
    },
    60_000,
    50,
  );
  return status!;
}

/** Consumes `n` messages of `topic` with `queue`'s codec; resolves with their payloads. */
function consumeAll(queue: RedisAckQueueService, topic: string, n: number): Promise<unknown[]> {
  const payloads: unknown[] = [];
  return new Promise((resolve) => {
    queue.consume(topic, (payload) => {
      payloads.push(payload);
      if (payloads.length === n) resolve(payloads);
    });
  });
}

describe('reencrypt: every stored value of a topic sealed again under its current key', () => {
  const fx = useRedis();

  it('moves messages of every state, dead letters and completed records from key v1 to v2, and seals plain ones', async () => {
    const topic = uniqueTopic();
    const plain = await fx.service({ keepCompleted: true });
    const old = await fx.service({ codec: codecOf(['v1'], 'v1'), keepCompleted: true });

    // Completed records written without a codec (a plain body kept, a plain result).
    await plain.pushMany(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ payload: { kind: 'plain-done', i } })),
    );
    for (const message of await plain.reserve(topic, { count: 10 })) await plain.ack(message, { result: message.id });
    // Dead letters, then completed records (a body kept, a sealed result), then leased ones.
    await old.pushMany(
      topic,
      Array.from({ length: 30 }, (_, i) => ({ payload: { kind: 'dead', i }, maxAttempts: 1 })),
    );
    for (const message of await old.reserve(topic, { count: 30 })) await old.nack(message, { error: 'boom' });
    await old.pushMany(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ payload: { kind: 'done', i } })),
    );
    const completed = await old.reserve(topic, { count: 10 });
    for (const message of completed) await old.ack(message, { result: message.id });
    await old.pushMany(
      topic,
      Array.from({ length: 5 }, (_, i) => ({ payload: { kind: 'leased', i } })),
    );
    const leased = await old.reserve(topic, { count: 5 });
    // Ready ones of every body shape: headers, group, maxAttempts, priority, tags, a big number.
    await old.pushMany(
      topic,
      Array.from({ length: 200 }, (_, i) => ({
        payload: { kind: 'ready', i, big: 9007199254740994 },
        ...(i % 2 === 0 && { headers: { h: `x${i}` } }),
        ...(i % 5 === 0 && { group: `g${i % 3}` }),
        ...(i % 7 === 0 && { maxAttempts: 4 }),
        ...(i % 11 === 0 && i % 5 !== 0 && { priority: 3 }),
        ...(i % 13 === 0 && { tags: ['t'] }),
      })),
    );
    await old.pushMany(
      topic,
      Array.from({ length: 20 }, (_, i) => ({ payload: { kind: 'delayed', i }, delayMs: 500 })),
    );
    // Plain ones, stored before the topic had a codec.
    await plain.push(topic, { kind: 'plain', i: 0 });
    await plain.push(topic, { kind: 'plain', i: 1 }, { headers: { a: 'b' }, maxAttempts: 3, group: 'g9' });
    const before = await storedKeyIds(fx.redis, topic);
    expect(before.size).toBe(10 + 30 + 10 + 5 + 200 + 20 + 2);
    expect([...before.values()].flat().filter((keyId) => keyId === undefined)).toHaveLength(10 * 2 + 2);

    const rotated = await fx.service({ codec: codecOf(['v1', 'v2'], 'v2'), keepCompleted: true });
    const { id, selected } = await rotated.reencrypt(topic);
    expect(selected).toBe(before.size);
    const done = await finished(rotated, id);
    expect(done).toMatchObject({ topic, action: 'reencrypt', selected, processed: selected, skipped: 0, failed: 0 });

    // Every sealable text stored is now under v2.
    const after = await storedKeyIds(fx.redis, topic);
    expect(after.size).toBe(before.size);
    expect([...after.entries()].filter(([, keyIds]) => keyIds.some((keyId) => keyId !== 'v2'))).toEqual([]);

    // A codec holding only v2 reads all of it: the completed records' bodies and results ...
    const onlyV2 = codecOf(['v2'], 'v2');
    for (const message of completed) {
      const record = JSON.parse((await fx.redis.hget(`{ackq:${topic}}:messages`, message.id))!) as {
        b: string;
        s: string;
      };
      expect(JSON.parse(await openText(topic, onlyV2, record.s))).toEqual({ result: message.id });
      const body = JSON.parse(record.b) as { e: string };
      expect(JSON.parse(await openText(topic, onlyV2, body.e))).toEqual({
        p: { kind: 'done', i: expect.any(Number) as number },
      });
    }
    // ... and every message, dead letters requeued, leased ones released.
    for (const message of leased) await old.release(message);
    const reader = await fx.service({ codec: onlyV2 });
    expect(await reader.requeueDead(topic)).toBe(30);
    const payloads = (await consumeAll(reader, topic, 30 + 5 + 200 + 20 + 2)) as { kind: string; i: number }[];
    const kinds = (kind: string) =>
      payloads
        .filter((p) => p.kind === kind)
        .map((p) => p.i)
        .sort((a, b) => a - b);
    const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);
    expect(kinds('dead')).toEqual(upTo(30));
    expect(kinds('leased')).toEqual(upTo(5));
    expect(kinds('ready')).toEqual(upTo(200));
    expect(kinds('delayed')).toEqual(upTo(20));
    expect(kinds('plain')).toEqual(upTo(2));
    expect(payloads.find((p) => p.kind === 'ready')).toMatchObject({ big: 9007199254740994 });
    await reader.waitUntilIdle(topic);
    expect(await reader.count(topic, 'dead')).toBe(0);
  });

  it('passes over what is under the current key already, and leaves what it cannot open as it is (failed)', async () => {
    const topic = uniqueTopic();
    const lost = await fx.service({ codec: codecOf(['v0'], 'v0') });
    const current = await fx.service({ codec: codecOf(['v1', 'v2'], 'v2') });
    const [unreadable] = await lost.pushMany(topic, [{ payload: 'v0' }]);
    await current.pushMany(
      topic,
      Array.from({ length: 4 }, (_, i) => ({ payload: i })),
    );
    const stored = await fx.redis.hget(`{ackq:${topic}}:messages`, unreadable.id);
    const { id, selected } = await current.reencrypt(topic);
    expect(selected).toBe(5);
    expect(await finished(current, id)).toMatchObject({ processed: 5, skipped: 5, failed: 1 });
    expect(await fx.redis.hget(`{ackq:${topic}}:messages`, unreadable.id)).toBe(stored);
  });

  it("runs beside the topic's consumers: each message handled once, every body and completed record left under v2", async () => {
    const topic = uniqueTopic();
    const old = await fx.service({ codec: codecOf(['v1'], 'v1') });
    await old.pushMany(
      topic,
      Array.from({ length: 600 }, (_, i) => ({ payload: { i } })),
    );
    const rotated = await fx.service({ codec: codecOf(['v1', 'v2'], 'v2'), keepCompleted: { maxCount: 10_000 } });
    const handled = new Map<number, number>();
    const { id } = await rotated.reencrypt(topic, { maxPerSecond: 300 });
    // Completed meanwhile, a message's body becomes its record: the step writes over neither
    // unless it is still the value it read, and takes the record in turn.
    rotated.consume<{ i: number }>(
      topic,
      async ({ i }) => {
        handled.set(i, (handled.get(i) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { i };
      },
      { concurrency: 4 },
    );
    const done = await finished(rotated, id);
    expect(done).toMatchObject({ selected: 600, processed: 600, failed: 0 });
    await rotated.waitUntilIdle(topic, { timeoutMs: 60_000 });
    expect(handled.size).toBe(600);
    expect([...handled.values()].every((n) => n === 1)).toBe(true);
    const after = await storedKeyIds(fx.redis, topic);
    expect(after.size).toBe(600);
    expect([...after.entries()].filter(([, keyIds]) => keyIds.some((keyId) => keyId !== 'v2'))).toEqual([]);
  });

  it('moves every partition of a partitioned topic', async () => {
    const topic = uniqueTopic();
    const topics = { [topic]: { partitions: 4 } };
    const old = await fx.service({ topics, codec: codecOf(['v1'], 'v1') });
    await old.pushMany(
      topic,
      Array.from({ length: 400 }, (_, i) => ({ payload: { i } })),
    );
    const rotated = await fx.service({ topics, codec: codecOf(['v1', 'v2'], 'v2') });
    const { id, selected } = await rotated.reencrypt(topic);
    expect(selected).toBe(400);
    expect(await finished(rotated, id)).toMatchObject({ processed: 400, skipped: 0, failed: 0 });
    const keyIds: (string | undefined)[] = [];
    for (const tag of partitionTags('ackq', topic, 4)) {
      const bodies = Object.values(await fx.redis.hgetall(`{${tag}}:messages`));
      expect(bodies.length).toBeGreaterThan(0);
      keyIds.push(...bodies.flatMap((body) => sealableTexts(body).map((text) => describeSealed(text).keyId)));
    }
    expect(keyIds).toHaveLength(400);
    expect(new Set(keyIds)).toEqual(new Set(['v2']));
  });

  it('is refused for a topic without a codec in this service, saying what to configure', async () => {
    const queue = await fx.service({ codec: codecOf(['v1'], 'v1'), topicCodecs: { bare: null } });
    await expect(queue.reencrypt('bare')).rejects.toThrow(ReencryptWithoutCodecError);
    await expect(queue.reencrypt('bare')).rejects.toThrow(/topicCodecs\["bare"\]/);
    const none = await fx.service();
    await expect(none.reencrypt(uniqueTopic())).rejects.toMatchObject({ code: 'REENCRYPT_WITHOUT_CODEC' });
  });

  it('is run only by a process whose codec seals under the same key', async () => {
    const topic = uniqueTopic();
    // A prefix of its own: the other tests' services run their bulk runners on theirs.
    const prefix = 'rx';
    const old = await fx.service({ prefix, codec: codecOf(['v1'], 'v1') });
    await old.pushMany(
      topic,
      Array.from({ length: 6 }, (_, i) => ({ payload: i })),
    );
    // Started at one value a second by a service that closes at once: its lease lapses unrenewed.
    const starter = await fx.service({ prefix, codec: codecOf(['v1', 'v2'], 'v2') });
    const { id } = await starter.reencrypt(topic, { maxPerSecond: 1 });
    await starter.close(0);
    const atClose = (await old.bulkStatus(id))!;
    // A service whose codec seals under v1 runs the bulk runner (it consumes) but gives it back.
    old.consume(uniqueTopic('idle'), () => undefined);
    // Nothing to wait on for a runner that rightly does nothing: past the starter's lease (5 s)
    // and a poll of this service's runner (5 s), it would have taken it over.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    expect(await old.bulkStatus(id)).toMatchObject({ state: 'running', processed: atClose.processed });
    // Listed apart from the other bulk actions: a runner of an earlier release polls only those.
    expect(await fx.redis.sismember(`{${prefix}:}:bulks-running`, id)).toBe(0);
    expect(await fx.redis.sismember(`{${prefix}:}:bulks-running-codec`, id)).toBe(1);
    // One under v2 takes it over and ends it.
    const taker = await fx.service({ prefix, codec: codecOf(['v1', 'v2'], 'v2') });
    taker.consume(uniqueTopic('idle'), () => undefined);
    await finished(taker, id);
    const after = await storedKeyIds(fx.redis, topic, prefix);
    expect(after.size).toBe(6);
    expect([...after.values()].flat().every((keyId) => keyId === 'v2')).toBe(true);
  }, 90_000);
});
