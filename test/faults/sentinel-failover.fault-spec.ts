import { Injectable, Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Redis } from 'ioredis';
import { type MessageContext, QueueHandler, RedisAckQueueModule, RedisAckQueueService } from '../../lib';
import { captureLogs } from '../support/capture-logs';
import { FaultLedger, NOTHING_LEFT, hold, leftovers, printSummary, produce, storedIds } from '../support/fault-ledger';
import { eventually, uniqueTopic } from '../support/queue-fixture';
import { RedisSentinelSet, SENTINEL_DOWN_AFTER_MS } from '../support/redis-sentinel';
import { wellBefore } from '../support/waits';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';

const BOOT_TOPIC = uniqueTopic('sentinel.boot');
const FAILOVER_TOPIC = uniqueTopic('sentinel.failover');
/** A reply the old master sent just before it died is read within this long of its exit. */
const LAST_WORDS_MS = 100;
/**
 * How long before its death the old master may have answered a write the replica never got. On
 * one host the replica's stream leaves in the same event-loop turn as the reply: 100 ms is ample.
 */
const REPLICATION_LAG_MS = 100;

/** What the handlers saw; the tests read it. */
const seen = {
  boot: [] as unknown[],
  onFailoverStart: (_id: string, _attempt: number): void => undefined,
};

@Injectable()
class SentinelHandlers {
  @QueueHandler(BOOT_TOPIC)
  boot(payload: unknown) {
    seen.boot.push(payload);
  }

  // Leases about as long as the outage: one may run out while Redis is away, and then the
  // ledger needs a reported lost lease to accept a second handling.
  @QueueHandler(FAILOVER_TOPIC, { concurrency: 8, leaseMs: 3_000 })
  async failover(_payload: unknown, context: MessageContext) {
    seen.onFailoverStart(context.id, context.attempt);
    await hold(10);
  }
}

describe('fault: Sentinel fails the master over (SIGKILL, the replica is promoted)', () => {
  let sentinel: RedisSentinelSet;
  let app: INestApplicationContext;
  let queue: RedisAckQueueService;
  const logs = captureLogs();

  beforeAll(async () => {
    sentinel = await RedisSentinelSet.start();
    @Module({
      imports: [RedisAckQueueModule.forRoot({ connection: { sentinels: sentinel.sentinels, name: sentinel.name } })],
      providers: [SentinelHandlers],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { abortOnError: false });
    queue = app.get(RedisAckQueueService);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await sentinel?.stop();
    logs.restore();
  });

  it('boots the module on { sentinels, name } and runs its @QueueHandler', async () => {
    const payloads = Array.from({ length: 20 }, (_, i) => ({ n: i }));
    await queue.pushMany(
      BOOT_TOPIC,
      payloads.map((payload) => ({ payload })),
    );
    await queue.waitUntilIdle(BOOT_TOPIC, { timeoutMs: 15_000 });
    expect(seen.boot).toEqual(payloads);
    expect(await queue.stats(BOOT_TOPIC)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
    // Logs name the Sentinel set, not whichever server was master at the time.
    expect(logs.lines.join('\n')).toMatch(
      new RegExp(`(Redis|Valkey) at sentinel\\(mymaster@127\\.0\\.0\\.1:${sentinel.sentinels[0].port},`),
    );
  });

  it('carries on through the failover without a restart: every resolved push handled, new pushes work', async () => {
    const ledger = new FaultLedger();
    const replies = new ReplyTimes();
    const subscriptions = [
      ledger.follow(queue, 'app', FAILOVER_TOPIC),
      queue.events$.subscribe((e) => e.type === 'acked' && e.topic === FAILOVER_TOPIC && replies.heard([e.id ?? ''])),
    ];
    const starts: number[] = [];
    seen.onFailoverStart = (id, attempt) => {
      ledger.start('app', id, attempt);
      replies.heard([id]);
      starts.push(Date.now());
    };
    const pushes: number[] = [];
    const onResolved = (ids: string[], at: number) => (replies.heard(ids, at), pushes.push(at));
    const total = 1500;
    const producing = produce(queue, FAILOVER_TOPIC, ledger, {
      total,
      batch: 10,
      everyMs: 40,
      idPrefix: 'f',
      onResolved,
    });

    // Kill while messages flow both ways.
    await eventually(() => ledger.pushed.size >= 300 && starts.length >= 200, 20_000);
    const killedAt = Date.now();
    const old = await sentinel.killMaster();
    const goneAt = Date.now();
    const promoted = await sentinel.waitForNewMaster(old);
    const promotedMs = Date.now() - killedAt;
    await producing;
    // New pushes once the failover is over.
    await produce(queue, FAILOVER_TOPIC, ledger, { total: 200, batch: 20, everyMs: 0, idPrefix: 'after' });
    await queue.waitUntilIdle(FAILOVER_TOPIC, { timeoutMs: 40_000 });

    // The consumer's blocking connection (a duplicate of the Sentinel client) waits on the new
    // master, so an idle consumer takes a push at once, not at its next 5 s poll.
    const redis = sentinel.client(promoted);
    await eventually(async () => (await blockedConnections(redis)).includes(`ackq:${FAILOVER_TOPIC}`), 15_000, 50);
    const wakePushedAt = Date.now();
    await produce(queue, FAILOVER_TOPIC, ledger, { total: 1, batch: 1, everyMs: 0, idPrefix: 'wake' });
    await eventually(() => ledger.starts('wake-0').length > 0, 10_000, 5);
    const wakeMs = ledger.starts('wake-0')[0].at - wakePushedAt;
    await queue.waitUntilIdle(FAILOVER_TOPIC, { timeoutMs: 10_000 });
    subscriptions.forEach((s) => s.unsubscribe());

    const tally = ledger.tally({ leftInRedis: await storedIds(redis, FAILOVER_TOPIC) });
    // Asynchronous replication: a write the old master answered in its last moments may never
    // have reached the replica (a push lost, an ack or a reserve undone). Only ids with such a
    // reply may break the ledger, and they are counted and printed, not hidden.
    const exposed = (id: string) => replies.between(id, killedAt - REPLICATION_LAG_MS, goneAt + LAST_WORDS_MS);
    const byReplication = tally.violations.filter((line) => exposed(line.slice(0, line.indexOf(':'))));
    const firstAfter = (times: number[]) => (times.find((t) => t > goneAt + LAST_WORDS_MS) ?? Infinity) - killedAt;
    const figures = { promotedMs, firstPushMs: firstAfter(pushes), firstHandlerMs: firstAfter(starts), wakeMs };
    console.log(
      `sentinel failover: promotion seen ${promotedMs} ms after the SIGKILL, first push ${figures.firstPushMs} ms, ` +
        `first handler ${figures.firstHandlerMs} ms; pushed ${tally.pushed}, lost ${tally.lost} (async replication), ` +
        `duplicates ${tally.duplicates}, replication anomalies ${byReplication.length}; idle wake-up ${wakeMs} ms`,
    );
    printSummary('sentinel-failover', tally, { old, promoted, ...figures, byReplication, ...ledger.counters() });
    if (process.env.FAULT_VERBOSE) console.log(logs.lines.join('\n'));

    expect(promoted).not.toEqual(old);
    expect(tally.violations.filter((line) => !byReplication.includes(line))).toEqual([]);
    expect(tally.pushed).toBe(total + 200 + 1);
    expect(tally.handled + tally.lost).toBe(tally.pushed);
    for (const id of ledger.pushed) if (/^(after|wake)-/.test(id)) expect(ledger.ackCount(id)).toBe(1);
    // Nothing answered between the kill and a promotion, which takes down-after-milliseconds at least.
    expect(figures.firstPushMs).toBeGreaterThanOrEqual(SENTINEL_DOWN_AFTER_MS);
    expect(figures.firstHandlerMs).toBeGreaterThanOrEqual(SENTINEL_DOWN_AFTER_MS);
    expect(Math.max(figures.firstPushMs, figures.firstHandlerMs)).toBeLessThan(20_000);
    // Woken by the push, not at the end of the idle wait.
    expect(wakeMs).toBeLessThan(wellBefore(DEFAULTS.idleWaitMs));
    expect(await leftovers(redis, FAILOVER_TOPIC)).toEqual(NOTHING_LEFT);
  }, 90_000);
});

/** When this process heard a reply about each message id (pushed, reserved, acked). */
class ReplyTimes {
  private readonly times = new Map<string, number[]>();

  heard(ids: string[], at = Date.now()): void {
    for (const id of ids) this.times.set(id, [...(this.times.get(id) ?? []), at]);
  }

  between(id: string, from: number, to: number): boolean {
    return (this.times.get(id) ?? []).some((at) => at >= from && at <= to);
  }
}

/** Names of the connections blocked in BLPOP on a server. */
async function blockedConnections(redis: Redis): Promise<string[]> {
  const lines = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'normal')).split('\n');
  return lines.filter((line) => line.includes(' cmd=blpop ')).map((line) => / name=(\S*)/.exec(line)?.[1] ?? '');
}
