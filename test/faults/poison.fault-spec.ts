import type { DeadLetter, QueueConsumer, RedisAckQueueService } from '../../lib';
import { FaultLedger, NOTHING_LEFT, faultSeed, leftovers, printSummary, seededRandom } from '../support/fault-ledger';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { followedConsumers } from '../support/fault-consumers';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

type Kind = 'good' | 'throws' | 'damaged';

/** Stored bodies that no JSON parser reads as an object: Redis' cjson refuses them too. */
const UNPARSABLE = [
  'not json',
  '{"p":',
  '',
  '{{}',
  '"a string"',
  'null',
  '123',
  '{"p":1,}',
  '\u0000\u0001',
  '{"p":"\\ud800"}',
];

/** Pushes `kinds` in one shuffled order (ids say what each is), then damages the stored body of the `damaged` ones. */
async function pushMixed(
  queue: RedisAckQueueService,
  redis: ReturnType<typeof useRedis>['redis'],
  topic: string,
  ledger: FaultLedger,
  kinds: Kind[],
  damage: (index: number) => string,
): Promise<string[]> {
  const items = kinds.map((kind, i) => ({
    id: `${kind}-${i}`,
    payload: kind === 'throws' ? { fail: true } : { n: i },
  }));
  const results = await queue.pushMany(topic, items);
  ledger.pushedIds(results.map((r) => r.id));
  const damaged = items.filter((item) => item.id.startsWith('damaged-')).map((item) => item.id);
  for (const [i, id] of damaged.entries()) await redis.hset(`{ackq:${topic}}:messages`, id, damage(i));
  return damaged;
}

async function startConsumers(
  fx: ReturnType<typeof useRedis>,
  topic: string,
  ledger: FaultLedger,
  leaseMs: number,
): Promise<QueueConsumer[]> {
  const { consumers } = await followedConsumers(fx, topic, ledger, {
    options: { leaseMs, maxAttempts: 3, backoff: { type: 'fixed', delayMs: 20 } },
    handle: (payload, context) => {
      if ((payload as { fail?: boolean } | null)?.fail) throw new Error(`poison ${context.id} always throws`);
    },
  });
  return consumers;
}

async function allDeadLetters(queue: RedisAckQueueService, topic: string): Promise<DeadLetter[]> {
  const letters: DeadLetter[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await queue.deadLetters(topic, { offset, limit: 100 });
    letters.push(...page);
    if (page.length < 100) return letters;
  }
}

describe('fault: poison messages among good ones', () => {
  const fx = useRedis();

  it('unparsable bodies and always-throwing handlers end in the dead letters once each; the good ones all flow', async () => {
    // Each throwing message: two retries (warn) and its dead letter (error).
    expectLogs(
      /failed on attempt [12] of 3: Error: poison/,
      /went to the dead letters as failed on attempt 3: Error: poison/,
    );
    const seed = faultSeed();
    const random = seededRandom(seed);
    const topic = uniqueTopic('poison');
    const ledger = new FaultLedger();
    const queue = await fx.service();
    const kinds: Kind[] = [
      ...Array<Kind>(1000).fill('good'),
      ...Array<Kind>(30).fill('throws'),
      ...Array<Kind>(30).fill('damaged'),
    ];
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
    }
    const damaged = await pushMixed(queue, fx.redis, topic, ledger, kinds, (i) => UNPARSABLE[i % UNPARSABLE.length]);
    const throwing = kinds.flatMap((kind, i) => (kind === 'throws' ? [`throws-${i}`] : []));
    const consumers = await startConsumers(fx, topic, ledger, 2000);
    try {
      await queue.waitUntilIdle(topic, { timeoutMs: 30_000 });
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }

    const letters = await allDeadLetters(queue, topic);
    const tally = ledger.tally({ leftInRedis: [], expectedDead: [...damaged, ...throwing] });
    printSummary('poison', tally, { seed, dead: letters.length, ...ledger.counters() });
    expect({ seed, violations: tally.violations }).toEqual({ seed, violations: [] });
    // Once each, with the right reason.
    expect(letters.map((l) => l.id).sort()).toEqual([...damaged, ...throwing].sort());
    for (const letter of letters) {
      if (letter.id.startsWith('damaged-')) {
        expect(letter.reason).toBe('malformed');
        expect(letter.error).toMatch(/not a JSON object/);
      } else {
        expect(letter).toMatchObject({ reason: 'failed', attempt: 3, payload: { fail: true } });
        expect(letter.error).toContain(`poison ${letter.id} always throws`);
      }
    }
    // Damaged bodies never reach a handler; throwing ones run exactly maxAttempts times.
    for (const id of damaged) expect(ledger.starts(id)).toHaveLength(0);
    for (const id of throwing)
      expect(
        ledger
          .starts(id)
          .map((s) => s.attempt)
          .sort(),
      ).toEqual([1, 2, 3]);
    // Every good one handled and acked once, at its first attempt.
    const good = kinds.flatMap((kind, i) => (kind === 'good' ? [`good-${i}`] : []));
    for (const id of good) {
      expect(ledger.starts(id).map((s) => s.attempt)).toEqual([1]);
      expect(ledger.ackCount(id)).toBe(1);
    }
    expect(loggedLines(/went to the dead letters as failed/)).toHaveLength(30);
    expect(loggedLines(/failed on attempt [12] of 3/)).toHaveLength(60);
    expect(tally.handled).toBe(1030);
    expect(tally.duplicates).toBe(0);
    expect(tally.lost).toBe(0);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 60, paused: false });
    await queue.purgeDead(topic);
    expect(await leftovers(fx.redis, topic)).toEqual(NOTHING_LEFT);
  }, 60_000);

  // Redis' cjson accepts bodies (NaN, hex numbers) that JSON.parse refuses: such a message
  // goes to dead letters as `malformed` on its own, and the rest of its batch is served.
  it('bodies that Redis cjson accepts but JSON.parse refuses are dead-lettered as malformed, not fatal to their batch', async () => {
    expectLogs(/went to the dead letters as malformed on attempt 1: the stored body is not valid JSON/);
    const topic = uniqueTopic('poison-cjson');
    const ledger = new FaultLedger();
    const queue = await fx.service();
    const kinds: Kind[] = Array.from({ length: 200 }, (_, i) => (i % 40 === 7 ? 'damaged' : 'good'));
    const lenient = ['{"p":NaN}', '{"p":0x10}', '{"p":Infinity}', '{"p":-Infinity}', '{"p":[1,NaN]}'];
    const damaged = await pushMixed(queue, fx.redis, topic, ledger, kinds, (i) => lenient[i % lenient.length]);
    const consumers = await startConsumers(fx, topic, ledger, 500);
    try {
      await queue.waitUntilIdle(topic, { timeoutMs: 15_000 });
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }
    const letters = await allDeadLetters(queue, topic);
    expect(letters.map((l) => [l.id, l.reason]).sort()).toEqual(damaged.map((id) => [id, 'malformed']).sort());
    expect(loggedLines(/as malformed/)).toHaveLength(damaged.length);
    const tally = ledger.tally({ leftInRedis: [], expectedDead: damaged });
    expect(tally.violations).toEqual([]);
    expect(tally.duplicates).toBe(0);
  }, 40_000);
});
