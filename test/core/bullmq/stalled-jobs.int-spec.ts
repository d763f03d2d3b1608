// Mirrors BullMQ's tests/stalled_jobs.test.ts as scenarios of this queue's public API. BullMQ finds
// stalled jobs with a checker and counts them apart from failures (`maxStalledCount`); here a lease
// that runs out is the stall, the next reserve takes it again, every delivery counts as an attempt,
// and a stalled worker's late ack is refused by its lease token.
import type { MessageContext } from '../../../lib';
import { expectLogs } from '../../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../../support/queue-fixture';

describe('BullMQ stalled_jobs, as leases that run out', () => {
  const fx = useRedis();
  expectLogs(/went to the dead letters|lease/);

  it('stalled_jobs: "process stalled jobs when starting a queue" — a lease that runs out is delivered again, and the stalled worker\'s late ack is refused', async () => {
    const topic = uniqueTopic('stalled');
    const dead = await fx.service();
    await dead.pushMany(
      topic,
      [1, 2, 3, 4].map((n) => ({ payload: n })),
    );
    // A worker that took all four and stopped: nothing of it runs any more, its leases run out.
    const stalled = await dead.reserve(topic, { count: 4, leaseMs: 100 });
    expect(stalled).toHaveLength(4);

    const fresh = await fx.service();
    const seen: { payload: unknown; attempt: number }[] = [];
    const consumer = fresh.consume(topic, (payload, context) => void seen.push({ payload, attempt: context.attempt }), {
      concurrency: 4,
    });
    await eventually(() => seen.length === 4);
    await consumer.close();
    // The stall counted as the first delivery.
    expect(seen.map(({ attempt }) => attempt)).toEqual([2, 2, 2, 2]);
    expect(seen.map(({ payload }) => payload).sort()).toEqual([1, 2, 3, 4]);
    // This queue's promise beyond BullMQ's: the stalled worker, had it woken, could not ack (fenced lease).
    for (const message of stalled) expect(await dead.ack(message)).toBe(false);
    expect(await fresh.stats(topic)).toMatchObject({ ready: 0, leased: 0, dead: 0 });
  });

  it('stalled_jobs: "moves jobs to failed" (stalled more than allowed) — a message whose every lease runs out is dead as `expired` after maxAttempts deliveries', async () => {
    const topic = uniqueTopic('stalled');
    const queue = await fx.service();
    await queue.push(topic, 'crashes its worker', { id: 'm', maxAttempts: 2 });
    const first = await queue.reserve(topic, { leaseMs: 50 });
    expect(first.map((m) => m.attempt)).toEqual([1]);
    const second = await eventually(async () => (await queue.reserve(topic, { leaseMs: 50 }))[0]);
    expect(second.attempt).toBe(2);
    // The reserve after the last lease ran out buries it instead of a third delivery.
    await eventually(async () => (await queue.reserve(topic)).length === 0 && (await queue.stats(topic)).dead === 1);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, leased: 0 });
    expect(await queue.deadLetters(topic)).toEqual([
      expect.objectContaining({ id: 'm', reason: 'expired', attempt: 2 }),
    ]);
  });

  it('stalled_jobs: "keeps stalledCounter" (when retrying jobs) — a stall and a failed attempt count in one `attempt`', async () => {
    const topic = uniqueTopic('stalled');
    const queue = await fx.service();
    await queue.push(topic, 'x', { maxAttempts: 3 });
    await queue.reserve(topic, { leaseMs: 50 }); // stalls
    const attempts: number[] = [];
    const consumer = queue.consume(
      topic,
      (_payload, context: MessageContext) => {
        attempts.push(context.attempt);
        if (context.attempt === 2) throw new Error('fails once');
      },
      { backoff: { type: 'fixed', delayMs: 0 } },
    );
    await eventually(() => attempts.length === 2);
    await consumer.close();
    // BullMQ keeps stalls (stalledCounter) apart from attemptsMade; here both spend deliveries.
    expect(attempts).toEqual([2, 3]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0, dead: 0 });
  });

  it('stalled_jobs: "should move parent to failed when child is moved to failed" (failParentOnFailure) — a child whose last lease ran out dead-letters its parent as `child-failed`', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    await queue.pushFlow({
      topic: parent,
      id: 'p',
      payload: 'p',
      children: [{ topic: child, id: 'c', payload: 1, options: { maxAttempts: 1 } }],
    });
    await queue.reserve(child, { leaseMs: 50 }); // its only delivery stalls
    let parentRan = false;
    // Failing the parent is the default here (BullMQ's failParentOnFailure); a consumer of the
    // child topic buries the child and passes its end on.
    const consumers = [queue.consume(child, () => undefined), queue.consume(parent, () => void (parentRan = true))];
    await eventually(async () => (await queue.get(parent, 'p'))?.state === 'dead', 20_000);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(await queue.get(parent, 'p')).toMatchObject({ reason: 'child-failed' });
    expect(await queue.deadLetters(child)).toEqual([expect.objectContaining({ id: 'c', reason: 'expired' })]);
    expect(parentRan).toBe(false);
  });

  it('stalled_jobs: "keeps the specified number of jobs in failed" (removeOnFail as a number) — `deadLetters.maxCount` bounds the dead letters of stalled messages', async () => {
    const topic = uniqueTopic('stalled');
    const queue = await fx.service({ deadLetters: { maxCount: 2 } });
    await queue.pushMany(
      topic,
      ['a', 'b', 'c'].map((id) => ({ id, payload: id, maxAttempts: 1 })),
    );
    await queue.reserve(topic, { count: 3, leaseMs: 50 });
    // Each reserve buries the expired last leases it would have taken: ask for all three.
    await eventually(async () => {
      const taken = await queue.reserve(topic, { count: 3 });
      const { ready, leased } = await queue.stats(topic);
      return taken.length === 0 && ready === 0 && leased === 0;
    });
    const dead = await queue.deadLetters(topic);
    expect(dead).toHaveLength(2);
    expect(dead.every(({ reason }) => reason === 'expired')).toBe(true);
  });

  it('stalled_jobs: "jobs not stalled while lock is extended" — heartbeats keep a handler longer than three leases from being delivered again', async () => {
    const topic = uniqueTopic('stalled');
    const [a, b] = [await fx.service(), await fx.service()];
    // A heartbeat comes every third of the lease: long enough that a loaded machine's stall does not lose one.
    const leaseMs = 1_500;
    const runs: { id: string; attempt: number }[] = [];
    const slow = async (_payload: unknown, context: MessageContext) => {
      runs.push({ id: context.id, attempt: context.attempt });
      await new Promise((resolve) => setTimeout(resolve, 3 * leaseMs));
    };
    await a.pushMany(
      topic,
      [1, 2, 3, 4].map((n) => ({ id: `m${n}`, payload: n })),
    );
    const acked: string[] = [];
    for (const service of [a, b])
      service.events$.subscribe((event) => event.type === 'acked' && event.topic === topic && acked.push(event.id!));
    const consumers = [
      a.consume(topic, slow, { concurrency: 4, leaseMs }),
      b.consume(topic, slow, { concurrency: 4, leaseMs }),
    ];
    await eventually(() => acked.length === 4, 20_000);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(runs.map(({ id }) => id).sort()).toEqual(['m1', 'm2', 'm3', 'm4']);
    expect(runs.every(({ attempt }) => attempt === 1)).toBe(true);
  });
});
