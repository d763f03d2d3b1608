// Mirrors BullMQ's tests/job_cancellation.test.ts and tests/job_cancellation_advanced.test.ts as
// scenarios of this queue's public API. BullMQ cancels through the worker that runs the job
// (`worker.cancelJob`), and a cancelled job then fails or is retried like any error; here
// `cancel(topic, id)` works from any process, in any state, and is final: the message is removed in
// one atomic step, the running handler's `signal` aborts with `MessageCancelledError`, its outcome
// no longer counts (no ack, retry or dead letter), and a late ack of its lease is refused.
import { MessageCancelledError, type MessageContext, type RedisAckQueueService } from '../../../lib';
import { untilCancelListened } from '../../support/cancel-listeners';
import { gate } from '../../support/gate';
import { eventually, uniqueTopic, useRedis } from '../../support/queue-fixture';
import { quietFor } from '../../support/waits';

/** The event types of `topic` that `service` emits, in order. */
function eventTypes(service: RedisAckQueueService, topic: string): string[] {
  const types: string[] = [];
  service.events$.subscribe((event) => event.topic === topic && types.push(event.type));
  return types;
}

/** A handler that waits for its signal, then does what `afterAbort` says (resolve, or throw the reason). */
function untilAborted(started: (context: MessageContext) => void, afterAbort: 'resolve' | 'throw') {
  return (_payload: unknown, context: MessageContext) => {
    started(context);
    return new Promise((resolve, reject) =>
      context.signal.addEventListener('abort', () =>
        afterAbort === 'resolve' ? resolve('done anyway') : reject(new Error('stopped on abort')),
      ),
    );
  };
}

describe('BullMQ job_cancellation, as a final cancel from any process', () => {
  const fx = useRedis();

  it('job_cancellation: "should cancel a running job using abort event (recommended)" — from another process; the signal aborts and the message is gone for good', async () => {
    const topic = uniqueTopic('cancel');
    const [worker, producer] = [await fx.service(), await fx.service()];
    const started = gate<MessageContext>();
    const runs: number[] = [];
    const consumer = worker.consume(
      topic,
      untilAborted((context) => (runs.push(context.attempt), started.open(context)), 'throw'),
      { leaseMs: 60_000 },
    );
    await producer.push(topic, 'long', { id: 'job-1' });
    const context = await started.promise;
    await untilCancelListened(fx.nodes(), topic);
    expect(await producer.cancel(topic, 'job-1')).toBe('leased');
    await eventually(() => context.signal.aborted);
    expect(context.signal.reason).toBeInstanceOf(MessageCancelledError);
    await eventually(() => consumer.running === 0);
    await consumer.close();
    expect(await producer.get(topic, 'job-1')).toBeNull();
    expect(runs).toEqual([1]);
  });

  it('job_cancellation: "should return false when cancelling a non-existent job" — `null`', async () => {
    const queue = await fx.service();
    expect(await queue.cancel(uniqueTopic('cancel'), 'never-pushed')).toBeNull();
  });

  it('job_cancellation: "should return false when cancelling a job that has already completed" — `null`; with keepCompleted it answers `completed` and removes the record', async () => {
    const topic = uniqueTopic('cancel');
    const queue = await fx.service();
    await queue.push(topic, 'x', { id: 'done' });
    const [message] = await queue.reserve(topic);
    await queue.ack(message);
    expect(await queue.cancel(topic, 'done')).toBeNull();

    const kept = uniqueTopic('cancel');
    const keeping = await fx.service({ keepCompleted: true });
    await keeping.push(kept, 'x', { id: 'done' });
    await keeping.ack((await keeping.reserve(kept))[0], { ok: true });
    expect(await keeping.cancel(kept, 'done')).toBe('completed');
    expect(await keeping.get(kept, 'done')).toBeNull();
  });

  it('job_cancellation: "should work with processor that ignores signal (backward compatibility)" — a handler that resolves anyway is not acked nor run again', async () => {
    const topic = uniqueTopic('cancel');
    const queue = await fx.service();
    const types = eventTypes(queue, topic);
    const started = gate<MessageContext>();
    const finish = gate();
    let runs = 0;
    const consumer = queue.consume(
      topic,
      async (_payload, context: MessageContext) => {
        runs++;
        started.open(context);
        await finish.promise; // never looks at its signal
        return 'result';
      },
      { leaseMs: 60_000 },
    );
    await queue.push(topic, 'x', { id: 'a' });
    const context = await started.promise;
    await untilCancelListened(fx.nodes(), topic);
    expect(await queue.cancel(topic, 'a')).toBe('leased');
    await eventually(() => context.signal.aborted);
    finish.open();
    await eventually(() => consumer.running === 0);
    await quietFor(200, 'a second delivery of the cancelled message');
    await consumer.close();
    expect(runs).toBe(1);
    expect(types).toEqual(['pushed', 'reserved', 'cancelled']);
  });

  it('job_cancellation: "should handle cancellation of job that throws error" — and advanced "should retry cancelled job when throwing regular Error": here not retried, not dead', async () => {
    const topic = uniqueTopic('cancel');
    const queue = await fx.service();
    const types = eventTypes(queue, topic);
    const started = gate<MessageContext>();
    const consumer = queue.consume(topic, untilAborted(started.open, 'throw'), {
      leaseMs: 60_000,
      backoff: { type: 'fixed', delayMs: 0 },
    });
    await queue.push(topic, 'x', { id: 'a' });
    await started.promise;
    await untilCancelListened(fx.nodes(), topic);
    await queue.cancel(topic, 'a');
    await eventually(() => consumer.running === 0);
    await quietFor(200, 'a retry of the cancelled message');
    await consumer.close();
    expect(types).toEqual(['pushed', 'reserved', 'cancelled']);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0, dead: 0 });
  });

  it('job_cancellation: "should handle concurrent cancellations" — two processes cancel one running message: exactly one answers `leased`', async () => {
    const topic = uniqueTopic('cancel');
    const [a, b] = [await fx.service(), await fx.service()];
    await a.push(topic, 'x', { id: 'raced' });
    await a.reserve(topic, { leaseMs: 60_000 });
    const answers = await Promise.all([a.cancel(topic, 'raced'), b.cancel(topic, 'raced')]);
    expect(answers.sort()).toEqual(['leased', null]);
  });

  it('job_cancellation: "should work with multiple workers processing same queue" — and advanced "should cancel specific job among concurrent jobs": only that one aborts', async () => {
    const topic = uniqueTopic('cancel');
    const [a, b] = [await fx.service(), await fx.service()];
    const contexts = new Map<string, MessageContext>();
    const release = gate();
    const handler = async (_payload: unknown, context: MessageContext) => {
      contexts.set(context.id, context);
      await Promise.race([
        release.promise,
        new Promise((resolve) => context.signal.addEventListener('abort', resolve)),
      ]);
    };
    const acked: string[] = [];
    for (const service of [a, b])
      service.events$.subscribe((event) => event.type === 'acked' && event.topic === topic && acked.push(event.id!));
    const consumers = [a.consume(topic, handler, { concurrency: 2 }), b.consume(topic, handler, { concurrency: 2 })];
    await a.pushMany(
      topic,
      ['j1', 'j2', 'j3', 'j4'].map((id) => ({ id, payload: id })),
    );
    await eventually(() => contexts.size === 4);
    await untilCancelListened(fx.nodes(), topic);
    expect(await a.cancel(topic, 'j3')).toBe('leased');
    await eventually(() => contexts.get('j3')!.signal.aborted);
    release.open();
    await eventually(() => acked.length === 3);
    await Promise.all(consumers.map((consumer) => consumer.close()));
    expect(acked.sort()).toEqual(['j1', 'j2', 'j4']);
    expect([...contexts.values()].filter((context) => context.signal.aborted).map((context) => context.id)).toEqual([
      'j3',
    ]);
  });

  it('job_cancellation_advanced: "should cancel job before it processes any data" — a ready or delayed message is removed and never delivered', async () => {
    const topic = uniqueTopic('cancel');
    const queue = await fx.service();
    await queue.push(topic, 'now', { id: 'ready-one' });
    await queue.push(topic, 'later', { id: 'delayed-one', delayMs: 100 });
    expect(await queue.cancel(topic, 'ready-one')).toBe('ready');
    expect(await queue.cancel(topic, 'delayed-one')).toBe('delayed');
    await quietFor(200, 'the delayed one coming due');
    expect(await queue.reserve(topic, { count: 10 })).toEqual([]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0 });
  });

  it('job_cancellation_advanced: "should handle cancellation of job with backoff retry" — a message waiting for its retry is cancelled as `delayed` and never retried', async () => {
    const topic = uniqueTopic('cancel');
    const queue = await fx.service();
    await queue.push(topic, 'x', { id: 'retrying' });
    const [first] = await queue.reserve(topic);
    expect(await queue.nack(first, { delayMs: 100, error: new Error('try again') })).toBe('retry');
    expect(await queue.cancel(topic, 'retrying')).toBe('delayed');
    await quietFor(200, 'the retry coming due');
    expect(await queue.reserve(topic)).toEqual([]);
  });

  it('job_cancellation_advanced: "should move cancelled job to failed state" — here a cancelled lease leaves no dead letter: its ack is refused and its nack answers `lost`', async () => {
    const topic = uniqueTopic('cancel');
    const queue = await fx.service();
    await queue.push(topic, 'x', { id: 'leased-one' });
    const [message] = await queue.reserve(topic, { leaseMs: 60_000 });
    expect(await queue.cancel(topic, 'leased-one')).toBe('leased');
    expect(await queue.nack(message, { error: new Error('late') })).toBe('lost');
    expect(await queue.ack(message)).toBe(false);
    expect(await queue.deadLetters(topic)).toEqual([]);
    expect(await queue.get(topic, 'leased-one')).toBeNull();
  });
});
