import { randomBytes } from 'node:crypto';
import { createEncryptionCodec, type RedisAckQueueService } from '../../lib';
import { describeSealed } from '../../lib/codecs/sealed-text';
import { ConsumerProcesses } from '../support/consumer-processes';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const TOTAL = 5_000;
const DEAD = 500;

/** The key id of every stored body of `topic` ('plain' for one not sealed). */
async function keyIdsOf(queue: { hgetall(key: string): Promise<Record<string, string>> }, topic: string) {
  const bodies = Object.values(await queue.hgetall(`{ackq:${topic}}:messages`));
  return bodies.map((body) => {
    const e = body.startsWith('{') ? (JSON.parse(body) as { e?: string }).e : undefined;
    return e === undefined ? 'plain' : (describeSealed(e).keyId ?? 'none');
  });
}

/** Consumes `n` messages of `topic`; resolves with their payloads' `i`. */
function consumeAll(queue: RedisAckQueueService, topic: string, n: number): Promise<number[]> {
  const seen: number[] = [];
  return new Promise((resolve) => {
    queue.consume<{ i: number }>(
      topic,
      (payload) => {
        seen.push(payload.i);
        if (seen.length === n) resolve(seen);
      },
      { concurrency: 50 },
    );
  });
}

describe('fault: a reencrypt whose process is SIGKILLed midway', () => {
  const fx = useRedis();

  it('is resumed by another process and leaves every message readable under the new key alone, none lost', async () => {
    const topic = uniqueTopic('reencrypt');
    const v1 = randomBytes(32);
    const v2 = randomBytes(32);
    const old = await fx.service({ codec: createEncryptionCodec({ keys: { v1 }, currentKeyId: 'v1' }) });
    await old.pushMany(
      topic,
      Array.from({ length: DEAD }, (_, i) => ({ payload: { i }, maxAttempts: 1 })),
    );
    for (let left = DEAD; left > 0;) {
      const batch = await old.reserve(topic, { count: left });
      await Promise.all(batch.map((message) => old.nack(message, { error: 'seeded failure' })));
      left -= batch.length;
    }
    await old.pushMany(
      topic,
      Array.from({ length: TOTAL - DEAD }, (_, i) => ({
        payload: { i: DEAD + i },
        ...(i % 2 === 0 && { headers: { h: 'x' } }),
      })),
    );
    expect(new Set(await keyIdsOf(fx.redis, topic))).toEqual(new Set(['v1']));

    const env = { ...fx.consumerEnv, TOPIC: topic, KEY_V1: v1.toString('hex'), KEY_V2: v2.toString('hex') };
    const processes = new ConsumerProcesses({ ...env, MAX_PER_SECOND: '1000' }, 'reencrypt-process.js');
    try {
      const runner = await processes.start();
      const { id, n } = processes.of('ready')[0];
      expect(n).toBe(TOTAL);

      // Killed midway: some moved, most not.
      await eventually(async () => ((await old.bulkStatus(id!))!.processed >= 1_000 ? true : undefined), 60_000, 20);
      await processes.kill(runner, 'SIGKILL');
      const atKill = (await old.bulkStatus(id!))!;
      expect(atKill.state).toBe('running');
      expect(atKill.processed).toBeLessThan(TOTAL);
      const mixed = await keyIdsOf(fx.redis, topic);
      expect(mixed.filter((keyId) => keyId === 'v1').length).toBeGreaterThan(0);

      // A new process with the codec takes it over once the dead one's lease lapses.
      await processes.start({ RESUME: '1' });
      const done = await eventually(
        async () => {
          const status = await old.bulkStatus(id!);
          return status?.state === 'done' ? status : undefined;
        },
        120_000,
        100,
      );
      // A step writes and takes its ids off the snapshot in one script: the new runner found
      // only values still under v1.
      expect(done).toMatchObject({ selected: TOTAL, processed: TOTAL, skipped: 0, failed: 0 });
    } finally {
      await processes.stopAll();
    }

    const keyIds = await keyIdsOf(fx.redis, topic);
    expect(keyIds).toHaveLength(TOTAL);
    expect(new Set(keyIds)).toEqual(new Set(['v2']));
    // A process with v2 alone reads every one of them: none lost.
    const reader = await fx.service({ codec: createEncryptionCodec({ keys: { v2 }, currentKeyId: 'v2' }) });
    expect(await reader.requeueDead(topic)).toBe(DEAD);
    const seen = await consumeAll(reader, topic, TOTAL);
    expect(new Set(seen).size).toBe(TOTAL);
    expect(Math.max(...seen)).toBe(TOTAL - 1);
    await reader.waitUntilIdle(topic, { timeoutMs: 60_000 });
    expect(await reader.count(topic, 'dead')).toBe(0);
  }, 300_000);
});
