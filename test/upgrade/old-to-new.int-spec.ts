import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { checkDeliveries, inspectLeftovers, leaveEverything, serveLeftovers } from './support/leftovers';
import { usePreviousRelease } from './support/previous-release';

describe('upgrading from the previous release: what it left in Redis', () => {
  const fx = useRedis();
  const release = usePreviousRelease();

  it('is read, served exactly once and in order by the current code, after the old service stopped', async () => {
    expect(release.loadedVersion).toBe(release.version);
    const topics = { plain: uniqueTopic('upgrade'), grouped: uniqueTopic('upgrade-grouped') };
    const old = await release.service({ connection: fx.server.url, keepCompleted: true, logLevel: 'error' });
    const leftovers = await leaveEverything(old, topics);
    // Stopped with its leases unacked, as a killed process leaves them: they come back once they expire.
    await old.close(0);

    const current = await fx.service();
    await inspectLeftovers(current, topics);
    for (const kind of ['plain', 'grouped'] as const) {
      const deliveries = await serveLeftovers(current, topics[kind], fx.redis, leftovers[kind], current);
      checkDeliveries(deliveries, leftovers[kind]);
    }
  });

  it('keeps the topic settings it stored: a pause, limits, schedules, partitions and the topic registry', async () => {
    const [paused, limited, scheduled, partitioned] = ['paused', 'limited', 'scheduled', 'partitioned'].map((name) =>
      uniqueTopic(`upgrade-${name}`),
    );
    const topics = { [partitioned]: { partitions: 3 } };
    const old = await release.service({ connection: fx.server.url, logLevel: 'error', topics });
    await old.push(paused, 'waits for resume', { id: 'p-1' });
    await old.pause(paused);
    const limits = { globalConcurrency: 3, groupConcurrency: 2, rateLimit: { max: 50, perMs: 1000 } };
    await old.setLimits(limited, limits);
    await old.upsertSchedule(scheduled, 'tick', { everyMs: 3_600_000, payload: { tick: true }, headers: { s: '1' } });
    const ids = Array.from({ length: 12 }, (_, n) => `part-${n}`);
    await old.pushMany(
      partitioned,
      ids.map((id) => ({ id, payload: { id }, ...(Number(id.slice(5)) % 2 && { group: id }) })),
    );
    await old.close(0);

    const current = await fx.service({ topics });
    // The registry holds the topics pushed to, reserved from or consumed.
    expect(await current.topics()).toEqual(expect.arrayContaining([paused, partitioned]));
    // Paused: nothing leased until resumed.
    expect(await current.stats(paused)).toMatchObject({ ready: 1, paused: true });
    expect(await current.reserve(paused)).toEqual([]);
    await current.resume(paused);
    expect((await current.reserve(paused)).map((m) => [m.id, m.payload])).toEqual([['p-1', 'waits for resume']]);
    expect(await current.limits(limited)).toEqual(limits);
    expect(await current.schedules(scheduled)).toEqual([expect.objectContaining({ name: 'tick', everyMs: 3_600_000 })]);
    const tick = await current.runScheduleNow(scheduled, 'tick');
    const [ticked] = await current.reserve(scheduled);
    expect(ticked).toMatchObject({ id: tick!.id, payload: { tick: true }, headers: { s: '1' } });
    // Every partition's messages, each once.
    const served: string[] = [];
    const consumer = current.consume(partitioned, (_payload, context) => void served.push(context.id));
    await eventually(() => served.length >= ids.length, 30_000);
    await current.waitUntilIdle(partitioned);
    await consumer.close();
    expect(served.sort()).toEqual([...ids].sort());
  });
});
