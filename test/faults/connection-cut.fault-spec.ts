import {
  FaultLedger,
  faultSeed,
  finishScenario,
  hold,
  leftovers,
  NOTHING_LEFT,
  produce,
  seededRandom,
} from '../support/fault-ledger';
import { DEFAULTS } from '../../lib/common/redis-ack-queue.constants';
import { followedConsumers } from '../support/fault-consumers';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { ReplyDroppingProxy } from '../support/reply-dropping-proxy';
import { wellBefore } from '../support/waits';

/** Two in-process consumers, each on its own service, recorded in the ledger. */
describe('fault: connections cut by the server', () => {
  const fx = useRedis();

  // A connection that drops after Redis ran an ack but before its reply arrived makes ioredis
  // resend the ack; the lease was still live, so the resent ack counts as acked, not as lost.
  it('an ack whose reply is lost to a cut connection is still reported as acked, not as a lost lease', async () => {
    const proxy = await ReplyDroppingProxy.start(fx.server.port);
    const queue = await fx.service({ connection: proxy.url });
    try {
      const topic = uniqueTopic('lost-reply');
      await queue.push(topic, 'x', { id: 'ack-whose-reply-is-lost' });
      const [message] = await queue.reserve(topic, { leaseMs: 30_000 });
      proxy.dropReplyTo('ack-whose-reply-is-lost');
      const acked = await queue.ack(message);
      // The ack did run once (its reply was lost), and the message is gone for good.
      expect(proxy.dropped).toBe(1);
      expect(await leftovers(fx.redis, topic)).toEqual(NOTHING_LEFT);
      expect(acked).toBe(true);
    } finally {
      await queue.close();
      await proxy.close();
    }
  });

  it('CLIENT KILL TYPE normal of every client, up to ten times during a burst: consumers resume well before an idle wait each time', async () => {
    const seed = faultSeed();
    const random = seededRandom(seed);
    const topic = uniqueTopic('client-kill');
    const ledger = new FaultLedger();
    const startTimes: number[] = [];
    // No scheduler: its look for schedule changes every 2 s keeps a connection from ever idling
    // past a 1 s timeout, and this test waits for the server to close every idle one.
    const producer = await fx.service({ scheduler: false });
    const { consumers } = await followedConsumers(fx, topic, ledger, {
      options: { leaseMs: 2000, scheduler: false },
      onStart: (at) => startTimes.push(at),
    });
    const total = 3000;
    // The producer keeps ahead of the consumers, so a gap in handler starts is a stall.
    let producingDone = false;
    const producing = produce(producer, topic, ledger, { total, batch: 30, everyMs: 40, idPrefix: 'ck' }).finally(
      () => (producingDone = true),
    );
    const kills: number[] = [];
    let killed = 0;
    try {
      // Cuts only while messages keep coming, so each one has work to resume.
      for (let k = 0; k < 10 && !producingDone; k++) {
        await hold(150 + Math.floor(random() * 350));
        if (producingDone) break;
        kills.push(Date.now());
        // Every client but the test's own inspection connection: producer, consumers, blocking waits.
        killed += Number(await fx.redis.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
      }
      await producing;
      await producer.waitUntilIdle(topic, { timeoutMs: 45_000 });
    } finally {
      await Promise.all(consumers.map((c) => c.close()));
    }
    // Five connections (producer, two consumers' commands and blocking waits) cut each time, give or take reconnects.
    expect(kills.length).toBeGreaterThanOrEqual(6);
    expect(killed).toBeGreaterThanOrEqual(3 * kills.length);

    // After each kill, some handler started again well before a lost wake-up's idle wait would end.
    const resumeMs = kills.map((at) => (startTimes.find((t) => t >= at) ?? Infinity) - at);
    const tally = await finishScenario(fx.redis, topic, ledger, 'client-kill', {
      shown: { seed },
      details: { resumeMs, killed },
    });
    expect(Math.max(...resumeMs)).toBeLessThan(wellBefore(DEFAULTS.idleWaitMs));
    expect(tally.pushed).toBe(total);
    expect(tally.handled).toBe(total);
  }, 90_000);

  it('the server timeout (CONFIG SET timeout 1) closes idle connections: an idle consumer still takes a push well before its idle wait ends', async () => {
    const topic = uniqueTopic('idle-timeout');
    const ledger = new FaultLedger();
    const startTimes: number[] = [];
    // No scheduler: its look for schedule changes every 2 s keeps a connection from ever idling
    // past a 1 s timeout, and this test waits for the server to close every idle one.
    const producer = await fx.service({ scheduler: false });
    const { consumers } = await followedConsumers(fx, topic, ledger, {
      options: { leaseMs: 2000, scheduler: false },
      onStart: (at) => startTimes.push(at),
    });
    const ownId = String(await fx.redis.call('CLIENT', 'ID'));
    // Connections that the idle timeout may close: all but blocked waits (Redis spares those) and our own.
    const idleableLines = async () =>
      String(await fx.redis.call('CLIENT', 'LIST', 'TYPE', 'normal'))
        .split('\n')
        .filter((line) => line.includes(' cmd=') && !line.includes(' cmd=blpop '))
        .filter((line) => /^id=(\d+)/.exec(line)?.[1] !== ownId);
    const idOf = (line: string) => /^id=(\d+)/.exec(line)?.[1] ?? '';
    const idleable = async () => (await idleableLines()).map(idOf);
    try {
      await fx.redis.config('SET', 'timeout', '1');
      const pushedAt: number[] = [];
      const pushMs: number[] = [];
      let closedIdle = 0;
      for (let round = 0; round < 4; round++) {
        // Idle until the server has closed the idle connections it had at the start of the round.
        const before = new Set(await idleable());
        await eventually(async () => !(await idleable()).some((id) => before.has(id)), 20_000, 100).catch(
          async (error: Error) => {
            // Which connections stayed busy, and with what: enough to tell whose loop kept them.
            const open = (await idleableLines()).filter((line) => before.has(idOf(line)));
            throw new Error(`${error.message}; still open:\n${open.join('\n')}`);
          },
        );
        closedIdle += before.size;
        // Then a small burst: every one must be taken, the first without waiting out the idle wait.
        pushedAt.push(Date.now());
        await produce(producer, topic, ledger, { total: 100, batch: 100, everyMs: 0, idPrefix: `idle${round}` });
        pushMs.push(Date.now() - pushedAt[round]);
        await producer.waitUntilIdle(topic, { timeoutMs: 15_000 });
      }
      const resumeMs = pushedAt.map((at) => (startTimes.find((t) => t >= at) ?? Infinity) - at);
      const tally = await finishScenario(fx.redis, topic, ledger, 'idle-timeout', {
        details: { resumeMs, pushMs, closedIdle },
      });
      expect(Math.max(...resumeMs)).toBeLessThan(wellBefore(DEFAULTS.idleWaitMs));
      expect(closedIdle).toBeGreaterThanOrEqual(4 * 3);
      expect(tally.handled).toBe(400);
    } finally {
      await fx.redis.config('SET', 'timeout', '0');
      await Promise.all(consumers.map((c) => c.close()));
    }
  }, 150_000);
});
