import { firstValueFrom, filter, take, toArray, type Observable } from 'rxjs';
import { InvalidOptionError, QueueClosedError, type RedisAckQueueFleetEvent } from '../../lib';
import { fleetEventsKey } from '../../lib/engine/keys/queue-keys';
import { ConsumerProcesses } from '../support/consumer-processes';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const SECRET = 'fleet-secret-payload-7f3a';

/** Resolves with the first `count` events of `events$` that match `match`. */
function collect(
  events$: Observable<RedisAckQueueFleetEvent>,
  count: number,
  match: (event: RedisAckQueueFleetEvent) => boolean = () => true,
): Promise<RedisAckQueueFleetEvent[]> {
  return firstValueFrom(events$.pipe(filter(match), take(count), toArray()));
}

describe('fleet events: every process of a prefix, read from one capped Redis Stream', () => {
  const fx = useRedis();
  let prefixes = 0;
  const freshPrefix = () => `fleet${process.pid}x${++prefixes}`;

  it("a service's events are read by another service on its own connection; no payload, header or error text is stored", async () => {
    const prefix = freshPrefix();
    const topic = uniqueTopic('fleet');
    const writer = await fx.service({ prefix, fleetEvents: true, maxAttempts: 1 });
    const watcher = await fx.service({ prefix });
    // A fresh prefix's stream is empty: reading from its start misses nothing, whenever the read begins.
    const seen = collect(watcher.fleetEvents$({ from: 'start' }), 3, (event) => event.topic === topic);

    const before = Date.now();
    await writer.push(topic, { secret: SECRET }, { id: 'm-1', headers: { token: SECRET } });
    const [message] = await writer.reserve(topic);
    await writer.nack(message, { error: new Error(SECRET) });

    const events = await seen;
    expect(events.map(({ type, id, attempt, reason }) => ({ type, id, attempt, reason }))).toEqual([
      { type: 'pushed', id: 'm-1', attempt: undefined, reason: undefined },
      { type: 'reserved', id: 'm-1', attempt: 1, reason: undefined },
      { type: 'dead', id: 'm-1', attempt: 1, reason: 'failed' },
    ]);
    for (const event of events) {
      expect(event.origin).toMatch(new RegExp(`:${process.pid}$`));
      // The server's clock, as the stream id says (same machine: close to ours).
      expect(event.at).toBe(Number(event.streamId.split('-')[0]));
      expect(Math.abs(event.at - before)).toBeLessThan(60_000);
    }
    const raw = JSON.stringify(await fx.redis.xrange(fleetEventsKey(prefix), '-', '+'));
    expect(raw).toContain('m-1');
    expect(raw).not.toContain(SECRET);
  });

  it("a consumer process's deliveries are heard in this process, which pushed them (events$ here hears only the push)", async () => {
    const prefix = freshPrefix();
    const topic = uniqueTopic('fleet');
    const processes = new ConsumerProcesses({
      ...fx.consumerEnv,
      PREFIX: prefix,
      TOPIC: topic,
      MAX_ATTEMPTS: '1',
      HANDLER_MS: '0',
      FLEET_EVENTS: '1',
    });
    try {
      const consumer = await processes.start();
      const producer = await fx.service({ prefix });
      const local: string[] = [];
      producer.events$.subscribe((event) => local.push(`${event.type} ${event.id}`));
      const seen = collect(producer.fleetEvents$({ from: 'start' }), 2, (event) => event.topic === topic);
      await producer.push(topic, { fail: true, secret: SECRET }, { id: 'remote-1' });

      const events = await seen;
      expect(events.map(({ type, id, reason }) => ({ type, id, reason }))).toEqual([
        { type: 'reserved', id: 'remote-1', reason: undefined },
        { type: 'dead', id: 'remote-1', reason: 'failed' },
      ]);
      for (const { origin } of events) expect(origin).toMatch(new RegExp(`:${consumer.pid}$`));
      // This process's own stream heard its push and nothing of the other process's deliveries.
      expect(local).toEqual(['pushed remote-1']);
      expect(JSON.stringify(await fx.redis.xrange(fleetEventsKey(prefix), '-', '+'))).not.toContain(SECRET);
    } finally {
      await processes.stopAll();
    }
  });

  it('reads from the start or on after a streamId, and a reader completes when its service closes', async () => {
    const prefix = freshPrefix();
    const topic = uniqueTopic('fleet');
    const writer = await fx.service({ prefix, fleetEvents: { maxLen: 1_000 } });
    const watcher = await fx.service({ prefix });
    const live = collect(watcher.fleetEvents$({ from: 'start' }), 3, (event) => event.topic === topic);
    await writer.pushMany(topic, [
      { id: 'a', payload: 1 },
      { id: 'b', payload: 2 },
      { id: 'c', payload: 3 },
    ]);
    const [first] = await live;

    const fromStart = await collect(watcher.fleetEvents$({ from: 'start' }), 3, (event) => event.topic === topic);
    expect(fromStart.map((event) => event.id)).toEqual(['a', 'b', 'c']);
    const after = await collect(watcher.fleetEvents$({ from: first.streamId }), 2, (event) => event.topic === topic);
    expect(after.map((event) => event.id)).toEqual(['b', 'c']);

    // From now: none of the earlier events (the pushes go on until the reader has one).
    const fromNow: RedisAckQueueFleetEvent[] = [];
    const subscription = watcher.fleetEvents$().subscribe((event) => fromNow.push(event));
    let n = 0;
    await eventually(
      async () => {
        await writer.push(topic, n, { id: `late-${n++}` });
        return fromNow.length > 0;
      },
      10_000,
      100,
    );
    subscription.unsubscribe();
    expect(fromNow.filter((event) => !event.id?.startsWith('late-'))).toEqual([]);

    // Its service's close ends a subscription that waits in XREAD BLOCK.
    const waiting = firstValueFrom(watcher.fleetEvents$({ from: 'now' }).pipe(toArray()));
    await watcher.close(0);
    await expect(waiting).resolves.toEqual([]);
    expect(() => watcher.fleetEvents$()).toThrow(QueueClosedError);
  });

  it('is off by default: nothing is appended; the option and from are checked', async () => {
    const prefix = freshPrefix();
    const queue = await fx.service({ prefix });
    await queue.push(uniqueTopic('quiet'), 1);
    await queue.close(0);
    expect(await fx.redis.exists(fleetEventsKey(prefix))).toBe(0);

    for (const fleetEvents of ['yes', { maxLen: 0 }, { maxLen: 1.5 }, []] as unknown[])
      await expect(fx.service({ prefix, fleetEvents } as never)).rejects.toThrow(InvalidOptionError);
    const reader = await fx.service({ prefix });
    expect(() => reader.fleetEvents$({ from: 'yesterday' })).toThrow(InvalidOptionError);
    expect(() => reader.fleetEvents$({ from: '12' })).toThrow(/'now', 'start' or a streamId/);
  });
});
