import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InvalidOptionError,
  type MessageContext,
  type PushOptions,
  QueueKeyTypeError,
  type RedisAckQueueEvent,
  type RedisAckQueueService,
} from '../../lib';
import { partitionOf } from '../../lib/engine/keys/partitions';
import { expectLogs } from '../support/capture-logs';
import { ConsumerProcesses } from '../support/consumer-processes';
import { gate } from '../support/gate';
import { commandCounts, eventually, snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';
import { quietFor, untilConsumerBlocked, withDelayOutlasting } from '../support/waits';

/**
 * Debounce, throttle and supersede by key (push-keyed.lua, prelude-key-modes.lua), against real
 * Redis: pushes racing from several processes of the built library, consumers running.
 */
/** Any message id, where a result is matched whole. */
const anyId = expect.any(String) as unknown as string;

describe('key modes', () => {
  const fx = useRedis();
  const folder = mkdtempSync(join(tmpdir(), 'ackq-keys-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  /** The keys a topic's key modes keep (its key states, its messages' keys, its throttle windows). */
  const keyModeKeys = async (topic: string) =>
    Object.keys(await snapshotTopic(fx.redis, topic)).filter((key) => /:(keys|key-of|throttle:.*)$/.test(key));

  /**
   * Races producer processes of the built library: each pushes COUNT times with `options` (one push
   * a call unless BATCH says otherwise), all starting together once every one is ready. Resolves
   * with their events once every one is done.
   */
  const racePushes = async (topic: string, options: PushOptions, env: Record<string, string>[]) => {
    const goFile = join(folder, `${topic}.go`);
    const processes = new ConsumerProcesses(
      { ...fx.consumerEnv, TOPIC: topic, OPTIONS: JSON.stringify(options), GO_FILE: goFile, BATCH: '1', EVERY_MS: '0' },
      'producer-process.js',
    );
    const children = await Promise.all(env.map((extra) => processes.start(extra)));
    writeFileSync(goFile, '');
    await Promise.all(
      children.map((child) => processes.waitFor((e) => e.type === 'closed' && e.pid === child.pid, 60_000)),
    );
    return processes;
  };

  /** Three producers pushing `count` times each, a call every `everyMs`; the third two pushes a call. */
  const threeProducers = (count: number, everyMs: number) => {
    const each = { COUNT: String(count), EVERY_MS: String(everyMs) };
    return [each, each, { ...each, BATCH: '2' }];
  };

  describe('debounce', () => {
    it("replaces the waiting message's payload and moves its due time; another key is another message", async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const debounce = { key: 'doc-1', delayMs: 60_000 };
      const first = await queue.push(topic, { v: 1 }, { debounce, headers: { from: 'first' } });
      expect(first).toEqual({ id: anyId, duplicate: false });
      const second = await queue.push(topic, { v: 2 }, { debounce, headers: { from: 'second' }, priority: 3 });
      expect(second).toEqual({ id: first.id, debounced: true });
      const info = (await queue.get(topic, first.id))!;
      expect(info).toMatchObject({
        state: 'delayed',
        payload: { v: 2 },
        headers: { from: 'second' },
        priority: 3,
        key: 'doc-1',
        mode: 'debounce',
      });
      // Both times are the server's, read in the push that moved it.
      expect(info.dueAt).toBe(info.enqueuedAt! + 60_000);
      const other = await queue.push(topic, { v: 3 }, { debounce: { key: 'doc-2', delayMs: 60_000 } });
      expect(other.id).not.toBe(first.id);
      expect(await queue.stats(topic)).toMatchObject({ delayed: 2, ready: 0 });
      const [listed] = await queue.list(topic, 'delayed', { limit: 1 });
      expect(listed.mode).toBe('debounce');
      expect(['doc-1', 'doc-2']).toContain(listed.key);
    });

    it('keeps its message due no later than maxWaitMs after the push that stored it', async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const debounce = { key: 'k', delayMs: 60_000, maxWaitMs: 5_000 };
      const { id } = await queue.push(topic, 1, { debounce });
      const storedAt = (await queue.get(topic, id))!.enqueuedAt!;
      expect((await queue.get(topic, id))!.dueAt).toBe(storedAt + 5_000);
      expect(await queue.push(topic, 2, { debounce })).toEqual({ id, debounced: true });
      expect((await queue.get(topic, id))!.dueAt).toBe(storedAt + 5_000);
    });

    it('wakes an idle consumer only for a due time earlier than the ones it waits for', async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const consumer = queue.consume(topic, () => undefined);
      const debounce = { key: 'k', delayMs: 600_000 };
      await queue.push(topic, 0, { debounce });
      await untilConsumerBlocked(fx.nodes(), topic);
      const wakesBefore = (await commandCounts(fx.redis)).rpush ?? 0;
      for (let n = 1; n <= 50; n++) await queue.push(topic, n, { debounce });
      await quietFor(200, 'a wake-up per push');
      // Each push moved the due time later: nothing for the consumer to wake for (a wake is an RPUSH).
      expect(((await commandCounts(fx.redis)).rpush ?? 0) - wakesBefore).toBe(0);
      await consumer.close();
    });

    it('stores a new message once the pending one started', async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const started: unknown[] = [];
      const release = gate();
      const consumer = queue.consume(topic, async (payload) => {
        started.push(payload);
        await release.promise;
      });
      const debounce = { key: 'k', delayMs: 0 };
      const first = await queue.push(topic, 'first', { debounce });
      await eventually(() => started.length === 1);
      const second = await queue.push(topic, 'second', { debounce });
      expect(second).toEqual({ id: anyId, duplicate: false });
      expect(second.id).not.toBe(first.id);
      release.open();
      await eventually(() => started.length === 2);
      expect(started).toEqual(['first', 'second']);
      await queue.waitUntilIdle(topic);
      await consumer.close();
      expect(await keyModeKeys(topic)).toEqual([]);
    });

    it('runs a burst of 1,000 pushes racing from four processes once, with the last payload', async () => {
      await withDelayOutlasting(4_000, async (delayMs) => {
        const queue = await fx.service();
        const topic = uniqueTopic();
        const runs: unknown[] = [];
        const consumers = [queue, await fx.service()].map((service) =>
          service.consume(topic, (payload) => void runs.push(payload), { concurrency: 4 }),
        );
        const debounce = { key: 'search:user-7', delayMs };
        const producers = await racePushes(topic, { debounce }, [
          { COUNT: '250' },
          { COUNT: '250' },
          { COUNT: '250', BATCH: '25' },
          { COUNT: '250', BATCH: '10' },
        ]);
        const last = await queue.push(topic, { last: true }, { debounce });
        // Every push landed while the message waited: the processes' pushes came closer than its delay.
        const stamps = producers
          .of('pushed')
          .map((e) => e.now!)
          .concat(Date.now())
          .sort((a, b) => a - b);
        const widest = Math.max(...stamps.slice(1).map((at, i) => at - stamps[i]));
        if (widest >= delayMs / 2) {
          await Promise.all(consumers.map((consumer) => consumer.close()));
          return false;
        }
        expect(producers.of('pushed').reduce((sum, e) => sum + e.n!, 0)).toBe(1);
        expect(last).toEqual({ id: anyId, debounced: true });
        await eventually(() => runs.length > 0, delayMs + 30_000);
        await queue.waitUntilIdle(topic);
        expect(runs).toEqual([{ last: true }]);
        await Promise.all(consumers.map((consumer) => consumer.close()));
        expect(await keyModeKeys(topic)).toEqual([]);
        return true;
      });
    });
  });

  describe('throttle', () => {
    it('stores one message per window; a push inside it answers the holder and changes nothing', async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const throttle = { key: 'report:42', windowMs: 60_000 };
      const first = await queue.push(topic, 1, { throttle });
      expect(first).toEqual({ id: anyId, duplicate: false });
      const before = await snapshotTopic(fx.redis, topic);
      expect(await queue.push(topic, 2, { throttle })).toEqual({ id: first.id, duplicate: true });
      expect(await queue.pushMany(topic, [{ payload: 3, throttle }])).toEqual([{ id: first.id, duplicate: true }]);
      expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
      expect(await queue.get(topic, first.id)).toMatchObject({ payload: 1, key: 'report:42', mode: 'throttle' });
      // Another key has its own window.
      expect((await queue.push(topic, 4, { throttle: { ...throttle, key: 'report:43' } })).duplicate).toBe(false);
    });

    it('starts exactly one message per window, by the server clock, under pushes racing from three processes', async () => {
      const windowMs = 400;
      const queue = await fx.service();
      const topic = uniqueTopic();
      const runs: MessageContext[] = [];
      const consumer = queue.consume(topic, (_payload, context) => void runs.push(context));
      const throttle = { key: 'sync', windowMs };
      const producers = await racePushes(topic, { throttle }, threeProducers(120, 10));
      const storedIds = producers.of('pushed').flatMap((e) => e.ids!);
      await eventually(() => runs.length === storedIds.length);
      await queue.waitUntilIdle(topic);
      expect(storedIds.length).toBeGreaterThanOrEqual(2);
      expect(runs.map((run) => run.id).sort()).toEqual([...storedIds].sort());
      // Each window (from its message's push, server time) holds one message; the next starts after it.
      const times = runs.map((run) => run.enqueuedAt).sort((a, b) => a - b);
      for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(windowMs);
      await consumer.close();
      // The window's key expires as the window ends: nothing stays.
      await eventually(async () => (await keyModeKeys(topic)).length === 0, windowMs + 10_000);
    });
  });

  describe('supersede', () => {
    /** Runs of one key, watched: how many run at once at most, and the payloads in start order. */
    const watchRuns = () => {
      const watch = { running: 0, most: 0, started: [] as unknown[], ended: [] as unknown[], aborted: 0 };
      const handler = async (payload: unknown, context: MessageContext, honorSignal: boolean) => {
        watch.running += 1;
        watch.most = Math.max(watch.most, watch.running);
        watch.started.push(payload);
        try {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 300);
            if (honorSignal) context.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()));
          });
          if (context.signal.aborted) watch.aborted += 1;
          else watch.ended.push(payload);
        } finally {
          watch.running -= 1;
        }
      };
      return { watch, handler };
    };

    /**
     * Two services consume one key's messages (concurrency 4 each) while three processes push
     * with `supersede` every 25 ms, then the test pushes `{ last: true }` and waits for the topic to
     * go idle; `sample` runs every 10 ms meanwhile.
     */
    const supersedeRace = async (
      running: 'cancel' | 'keep',
      sample?: (queue: RedisAckQueueService, topic: string) => Promise<void>,
    ) => {
      const topic = uniqueTopic();
      const { watch, handler } = watchRuns();
      const services = [await fx.service(), await fx.service()];
      const consumers = services.map((service) =>
        service.consume(topic, (payload, context) => handler(payload, context, running === 'cancel'), {
          concurrency: 4,
        }),
      );
      let sampling = true;
      const sampler = (async () => {
        while (sampling && sample) {
          await sample(services[0], topic);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      const supersede = { key: 'doc-9', running };
      await racePushes(topic, { supersede }, threeProducers(40, 25));
      await services[0].push(topic, { last: true }, { supersede });
      await eventually(() => watch.ended.some((payload) => (payload as { last?: boolean }).last), 30_000);
      await services[0].waitUntilIdle(topic);
      sampling = false;
      await sampler;
      await Promise.all(consumers.map((consumer) => consumer.close()));
      return { watch, keysLeft: await keyModeKeys(topic) };
    };

    it("with running 'cancel' never runs two of a key at once, and runs the latest payload last", async () => {
      const { watch, keysLeft } = await supersedeRace('cancel');
      expect(watch.most).toBe(1);
      expect(watch.started.at(-1)).toEqual({ last: true });
      expect(watch.ended.at(-1)).toEqual({ last: true });
      // Pushes came while messages ran: some were cancelled, their handlers aborted.
      expect(watch.aborted).toBeGreaterThan(0);
      expect(keysLeft).toEqual([]);
    });

    it("with running 'keep' runs at most one of a key and keeps at most one waiting; the latest payload runs last", async () => {
      let mostLive = 0;
      const { watch, keysLeft } = await supersedeRace('keep', async (queue, topic) => {
        const { ready, delayed, leased } = await queue.stats(topic);
        mostLive = Math.max(mostLive, ready + delayed + leased);
      });
      expect(watch.most).toBe(1);
      expect(mostLive).toBeLessThanOrEqual(2);
      expect(watch.aborted).toBe(0);
      expect(watch.started.at(-1)).toEqual({ last: true });
      expect(keysLeft).toEqual([]);
    });

    it('keeps a ready message its place in line when a push replaces its payload', async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const supersede = { key: 'k', running: 'keep' as const };
      await queue.pushMany(topic, [{ payload: 'p1' }, { payload: 'p2' }]);
      const { id } = await queue.push(topic, 'first', { supersede });
      await queue.pushMany(topic, [{ payload: 'p3' }, { payload: 'p4' }]);
      expect(await queue.push(topic, 'latest', { supersede })).toEqual({ id, superseded: true });
      const ready = await queue.list(topic, 'ready');
      expect(ready.map((message) => message.payload)).toEqual(['p1', 'p2', 'latest', 'p3', 'p4']);
      // A new priority is a new place: the tail of its level.
      await queue.push(topic, 'urgent', { supersede, priority: 5 });
      expect((await queue.list(topic, 'ready')).map((message) => message.payload)).toEqual([
        'urgent',
        'p1',
        'p2',
        'p3',
        'p4',
      ]);
    });

    it('replaces the waiting message while one runs, and starts it once the running one ends', async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const started: unknown[] = [];
      const release = gate();
      const consumer = queue.consume(topic, async (payload) => {
        started.push(payload);
        if (payload === 'a') await release.promise;
      });
      const supersede = { key: 'k', running: 'keep' as const };
      const a = await queue.push(topic, 'a', { supersede });
      await eventually(() => started.length === 1);
      const b = await queue.push(topic, 'b', { supersede });
      expect(b).toEqual({ id: anyId, duplicate: false });
      expect(await queue.push(topic, 'c', { supersede })).toEqual({ id: b.id, superseded: true });
      expect(await queue.get(topic, b.id)).toMatchObject({
        state: 'delayed',
        payload: 'c',
        key: 'k',
        mode: 'supersede',
      });
      expect(await queue.get(topic, a.id)).toMatchObject({ state: 'leased', key: 'k', mode: 'supersede' });
      // Listed as delayed, as stats count it, with no due time (get shows none either).
      expect((await queue.list(topic, 'delayed')).map((m) => [m.id, m.dueAt, m.key])).toEqual([[b.id, undefined, 'k']]);
      expect((await queue.stats(topic)).delayed).toBe(1);
      expect((await queue.get(topic, b.id))!.dueAt).toBeUndefined();
      release.open();
      await eventually(() => started.length === 2);
      await queue.waitUntilIdle(topic);
      expect(started).toEqual(['a', 'c']);
      await consumer.close();
      expect(await keyModeKeys(topic)).toEqual([]);
    });

    it("with 'cancel', starts the new message as soon as the cancelled handler returns, not at its lease's end", async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const started: unknown[] = [];
      const consumer = queue.consume(
        topic,
        async (payload, context) => {
          started.push(payload);
          if (payload === 'a') await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
        },
        { leaseMs: 600_000 },
      );
      const events: RedisAckQueueEvent[] = [];
      queue.events$.subscribe((event) => events.push(event));
      const supersede = { key: 'k', running: 'cancel' as const };
      const a = await queue.push(topic, 'a', { supersede });
      await eventually(() => started.length === 1);
      const b = await queue.push(topic, 'b', { supersede });
      // The push that cancelled it says so, as cancel() does.
      expect(events.filter((e) => e.type === 'cancelled')).toEqual([{ type: 'cancelled', topic, id: a.id }]);
      // Far sooner than the 10-minute lease: the consumer's refused ack released it.
      await eventually(() => started.length === 2, 30_000);
      expect(started).toEqual(['a', 'b']);
      expect(events.filter((e) => e.type === 'pushed').map((e) => e.id)).toEqual([a.id, b.id]);
      await queue.waitUntilIdle(topic);
      await consumer.close();
      expect(await keyModeKeys(topic)).toEqual([]);
    });

    it("with 'cancel', starts the new message once the superseded lease's holder acks or nacks it (refused)", async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const supersede = { key: 'k', running: 'cancel' as const };
      for (const settle of ['ack', 'nack'] as const) {
        const first = await queue.push(topic, 'a', { supersede });
        const [lease] = await queue.reserve(topic, { leaseMs: 600_000 });
        expect(lease.id).toBe(first.id);
        const second = await queue.push(topic, 'b', { supersede });
        // Not before the superseded lease ends: its handler may still run.
        expect((await queue.get(topic, second.id))!.dueAt).toBe(lease.leaseDeadline);
        expect(await queue.reserve(topic)).toEqual([]);
        // Its holder says it ended (the handler returned, or failed): refused, as the cancel took it.
        if (settle === 'ack') expect(await queue.ack(lease)).toBe(false);
        else expect(await queue.nack(lease, { delayMs: 0 })).toBe('lost');
        const [next] = await queue.reserve(topic);
        expect(next).toMatchObject({ id: second.id, payload: 'b' });
        expect(await queue.ack(next)).toBe(true);
      }
      expect(await keyModeKeys(topic)).toEqual([]);
    });

    // Found by the model-based test (test/verification/model/lifecycle.int-spec.ts): cancelling the
    // waiting message by hand forgot the superseded handler, so the key's next push started at once.
    it('a cancelled waiting message does not let the next push run beside a superseded handler that has not returned', async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      for (const running of ['cancel', 'keep'] as const) {
        const supersede = { key: `k-${running}`, running };
        const first = await queue.push(topic, 'a', { supersede });
        const [lease] = await queue.reserve(topic, { leaseMs: 600_000 });
        expect(lease.id).toBe(first.id);
        // The first is cancelled while its handler runs (by the push under 'cancel', by hand under 'keep').
        const second = await queue.push(topic, 'b', { supersede });
        if (running === 'keep') expect(await queue.cancel(topic, first.id)).toBe('leased');
        expect(await queue.cancel(topic, second.id)).toBe('delayed');
        const third = await queue.push(topic, 'c', { supersede });
        expect(await queue.get(topic, third.id)).toMatchObject({ state: 'delayed', dueAt: lease.leaseDeadline });
        expect(await queue.reserve(topic)).toEqual([]);
        // The first's holder says its handler returned: the third starts now.
        expect(await queue.ack(lease)).toBe(false);
        const [next] = await queue.reserve(topic);
        expect(next).toMatchObject({ id: third.id, payload: 'c' });
        expect(await queue.ack(next)).toBe(true);
      }
      expect(await keyModeKeys(topic)).toEqual([]);
    });

    it("with 'cancel', holds the new message until the deadline of a lease whose consumer died", async () => {
      const topic = uniqueTopic();
      const processes = new ConsumerProcesses({
        ...fx.consumerEnv,
        TOPIC: topic,
        LEASE_MS: '5000',
        HANDLER_MS: '600000',
        CONCURRENCY: '1',
      });
      const child = await processes.start();
      const queue = await fx.service();
      const supersede = { key: 'k', running: 'cancel' as const };
      const first = await queue.push(topic, { n: 1 }, { supersede });
      await processes.waitFor((e) => e.type === 'start' && e.id === first.id);
      // Killed: nobody will say its handler returned; only its lease's deadline can.
      await processes.kill(child);
      const { leaseDeadline } = (await queue.get(topic, first.id))!;
      const second = await queue.push(topic, { n: 2 }, { supersede });
      expect(await queue.get(topic, first.id)).toBeNull();
      expect((await queue.get(topic, second.id))!.dueAt).toBe(leaseDeadline);
      const runs: unknown[] = [];
      const consumer = queue.consume(topic, (payload) => void runs.push(payload));
      await eventually(() => runs.length === 1, 30_000);
      await queue.waitUntilIdle(topic);
      expect(runs).toEqual([{ n: 2 }]);
      await consumer.close();
      expect(await keyModeKeys(topic)).toEqual([]);
    });

    it.each([
      ['cancel', 'after'],
      ['keep', 'after'],
      ['keep', 'before'],
    ] as const)(
      "with '%s', a running message cancelled by hand holds its key until its handler returned (next pushed %s the cancel)",
      async (running, pushed) => {
        const queue = await fx.service();
        const topic = uniqueTopic();
        const log: string[] = [];
        const aborted = gate();
        const release = gate();
        const consumer = queue.consume(
          topic,
          async (payload: string, context) => {
            log.push(`${payload} started`);
            if (payload === 'a') {
              // Heeds the abort late: runs on until the test lets it return.
              context.signal.addEventListener('abort', () => aborted.open());
              await release.promise;
            }
            log.push(`${payload} returned`);
          },
          { leaseMs: 600_000 },
        );
        const supersede = { key: 'k', running };
        const a = await queue.push(topic, 'a', { supersede });
        await eventually(() => log.length === 1);
        const { leaseDeadline } = (await queue.get(topic, a.id))!;
        const b = pushed === 'before' ? await queue.push(topic, 'b', { supersede }) : undefined;
        expect(await queue.cancel(topic, a.id)).toBe('leased');
        await aborted.promise;
        const next = b ?? (await queue.push(topic, 'b', { supersede }));
        expect(next).toEqual({ id: anyId, duplicate: false });
        // Not before the cancelled lease's deadline (10 minutes), unless its consumer says the handler returned.
        expect(await queue.get(topic, next.id)).toMatchObject({ state: 'delayed', dueAt: leaseDeadline });
        release.open();
        await eventually(() => log.length === 4, 30_000);
        expect(log).toEqual(['a started', 'a returned', 'b started', 'b returned']);
        await queue.waitUntilIdle(topic);
        await consumer.close();
        expect(await keyModeKeys(topic)).toEqual([]);
      },
    );

    it('a running message cancelled by hand holds its key until its lease deadline when its holder never says it ended', async () => {
      const queue = await fx.service();
      const topic = uniqueTopic();
      const supersede = { key: 'k', running: 'keep' as const };
      const first = await queue.push(topic, 'a', { supersede });
      // Its holder dies: it will neither ack nor nack.
      const [lease] = await queue.reserve(topic, { leaseMs: 1_000 });
      expect(lease.id).toBe(first.id);
      expect(await queue.cancel(topic, first.id)).toBe('leased');
      const second = await queue.push(topic, 'b', { supersede });
      expect(await queue.get(topic, second.id)).toMatchObject({ state: 'delayed', dueAt: lease.leaseDeadline });
      const runs: unknown[] = [];
      const consumer = queue.consume(topic, (payload) => void runs.push(payload));
      await eventually(() => runs.length === 1, 30_000);
      await queue.waitUntilIdle(topic);
      expect(runs).toEqual(['b']);
      await consumer.close();
      expect(await keyModeKeys(topic)).toEqual([]);
    });

    it('frees a key whose running message is cancelled by hand, or dies', async () => {
      expectLogs(/went to the dead letters/);
      const queue = await fx.service();
      const topic = uniqueTopic();
      const started: unknown[] = [];
      const consumer = queue.consume(
        topic,
        async (payload, context) => {
          started.push(payload);
          if (payload === 'fails') throw new Error('no');
          if (payload === 'hangs') await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
        },
        { maxAttempts: 1 },
      );
      const supersede = { key: 'k', running: 'keep' as const };
      const hangs = await queue.push(topic, 'hangs', { supersede });
      await eventually(() => started.length === 1);
      await queue.push(topic, 'fails', { supersede });
      expect(await queue.cancel(topic, hangs.id)).toBe('leased');
      await eventually(() => started.length === 2);
      await eventually(async () => (await queue.stats(topic)).dead === 1);
      await queue.push(topic, 'runs', { supersede });
      await eventually(() => started.length === 3);
      await queue.waitUntilIdle(topic);
      expect(started).toEqual(['hangs', 'fails', 'runs']);
      // A dead letter has left its key.
      const [dead] = await queue.list(topic, 'dead');
      expect(dead.key).toBeUndefined();
      await consumer.close();
      expect(await keyModeKeys(topic)).toEqual([]);
    });
  });

  it('leaves no key state once many keys of every mode went quiet', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const windowMs = 300;
    const runs: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void runs.push(payload), { concurrency: 8 });
    const items = Array.from({ length: 100 }, (_, i) => [
      { payload: i, debounce: { key: `d${i}`, delayMs: 0 } },
      { payload: i, throttle: { key: `t${i}`, windowMs } },
      { payload: i, supersede: { key: `c${i}`, running: 'cancel' as const } },
      { payload: i, supersede: { key: `k${i}`, running: 'keep' as const } },
    ]).flat();
    // Twice each: the second round lands on running, finished or waiting messages of the same keys.
    await queue.pushMany(topic, items);
    await queue.pushMany(topic, items);
    await eventually(async () => {
      await queue.waitUntilIdle(topic);
      return (await keyModeKeys(topic)).length === 0;
    }, windowMs + 30_000);
    expect(runs.length).toBeGreaterThanOrEqual(400);
    await consumer.close();
  });

  it('keeps a key on one partition of a partitioned topic, every message found by its id', async () => {
    const partitions = 4;
    const queue = await fx.service({ topics: { tenants: { partitions } } });
    const topic = 'tenants';
    const results = await queue.pushMany(topic, [
      { payload: 'plain' },
      ...['a', 'b', 'c', 'd', 'e', 'f'].map((key) => ({ payload: key, debounce: { key, delayMs: 60_000 } })),
      { payload: 'a2', debounce: { key: 'a', delayMs: 60_000 } },
      { payload: 't', throttle: { key: 'a', windowMs: 60_000 } },
    ]);
    expect(results[0]).toEqual({ id: anyId, duplicate: false });
    expect(results[7]).toEqual({ id: results[1].id, debounced: true });
    for (const [i, key] of ['a', 'b', 'c', 'd', 'e', 'f'].entries()) {
      const { id } = results[i + 1];
      expect(partitionOf(id, partitions)).toBe(partitionOf(key, partitions));
      expect(await queue.get(topic, id)).toMatchObject({ key, mode: 'debounce', payload: key === 'a' ? 'a2' : key });
    }
    expect(partitionOf(results[8].id, partitions)).toBe(partitionOf('a', partitions));
    expect(await queue.cancel(topic, results[2].id)).toBe('delayed');
    expect((await queue.push(topic, 'b2', { debounce: { key: 'b', delayMs: 60_000 } })).duplicate).toBe(false);
  });

  describe('refuses bad input with a typed error, changing nothing', () => {
    // Typed as no PushOptions: each conflict fails to compile (test/types/key-modes.ts); checked at run time for untyped callers.
    const cases: [string, object][] = [
      ['two modes', { debounce: { key: 'secret-key', delayMs: 10 }, throttle: { key: 'secret-key', windowMs: 10 } }],
      ['a mode with an id', { id: 'mine', supersede: { key: 'secret-key', running: 'keep' } }],
      ['debounce with a group', { group: 'g', debounce: { key: 'secret-key', delayMs: 10 } }],
      ['throttle with a group', { group: 'g', throttle: { key: 'secret-key', windowMs: 10 } }],
      ['supersede with a group', { group: 'g', supersede: { key: 'secret-key', running: 'cancel' } }],
      ['debounce with delayMs', { delayMs: 5, debounce: { key: 'secret-key', delayMs: 10 } }],
      ['debounce with availableAt', { availableAt: Date.now(), debounce: { key: 'secret-key', delayMs: 10 } }],
      ['an empty key', { debounce: { key: '', delayMs: 10 } }],
      ['a key of 257 characters', { throttle: { key: 's'.repeat(257), windowMs: 10 } }],
      ['a key that is no string', { throttle: { key: 7 as unknown as string, windowMs: 10 } }],
      ['a negative debounce delay', { debounce: { key: 'secret-key', delayMs: -1 } }],
      ['a negative maxWaitMs', { debounce: { key: 'secret-key', delayMs: 1, maxWaitMs: -1 } }],
      ['a window of 0', { throttle: { key: 'secret-key', windowMs: 0 } }],
      ['another running', { supersede: { key: 'secret-key', running: 'stop' as 'keep' } }],
      ['a mode that is no object', { debounce: 'secret-key' as never }],
    ];
    let queue: RedisAckQueueService;
    beforeAll(async () => {
      queue = await fx.service();
    });

    it.each(cases)('%s', async (_name, options) => {
      const topic = uniqueTopic();
      await queue.push(topic, 'before');
      const before = await snapshotTopic(fx.redis, topic);
      const refused = await queue.push(topic, 'x', options as PushOptions).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidOptionError);
      expect((refused as Error).message).not.toContain('secret-key');
      // In a pushMany, one bad item refuses the call: the good ones are not stored either.
      const many = [
        { payload: 'good', debounce: { key: 'good', delayMs: 10 } },
        { payload: 'x', ...options },
      ];
      await expect(queue.pushMany(topic, many)).rejects.toBeInstanceOf(InvalidOptionError);
      expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
    });

    it('a foreign value under a key of theirs: QueueKeyTypeError, nothing stored', async () => {
      for (const suffix of ['keys', 'key-of', 'throttle:t']) {
        const topic = uniqueTopic();
        const key = `{ackq:${topic}}:${suffix}`;
        // The state hashes hold a string, the window of key 't' (a string) a hash.
        await (suffix === 'throttle:t' ? fx.redis.hset(key, 'x', '1') : fx.redis.set(key, 'foreign'));
        const before = await snapshotTopic(fx.redis, topic);
        const items = [
          { payload: 1, debounce: { key: 'd', delayMs: 10 } },
          { payload: 2, throttle: { key: 't', windowMs: 10 } },
        ];
        const refused = await queue.pushMany(topic, items).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(QueueKeyTypeError);
        // A throttle window is named by its prefix: the key is the user's.
        expect((refused as Error).message).not.toContain(':throttle:t');
        expect(await snapshotTopic(fx.redis, topic)).toEqual(before);
      }
    });

    it('in a flow', async () => {
      const topic = uniqueTopic();
      const flow = { topic, payload: 1, options: { debounce: { key: 'k', delayMs: 1 } } as never };
      await expect(queue.pushFlow(flow)).rejects.toBeInstanceOf(InvalidOptionError);
      expect(await snapshotTopic(fx.redis, topic)).toEqual({});
    });
  });
});
