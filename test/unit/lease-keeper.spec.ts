import { QueueLogger } from '../../lib/observability/queue-logger';
import {
  HandlerTimeoutError,
  LeaseLostError,
  type MessageContext,
  type QueueHandlerFn,
  type QueueHandlerOptions,
  type RedisAckQueueEvent,
  type ReservedMessage,
} from '../../lib';
import { QueueEvents } from '../../lib/queue/queue-events';
import { resolveConsumerSettings } from '../../lib/queue/settings';
import { expectLogs } from '../support/capture-logs';
import { deferred, turns } from '../support/async-helpers';
import { FakeEngine } from '../support/fake-engine';
import { KeeperWithAcks } from '../support/keeper-with-acks';

let engine: FakeEngine;
let events: RedisAckQueueEvent[];
let finished: number[];
const keepers: KeeperWithAcks<string>[] = [];
// Each test's keeper is closed after it, handing back what still runs.
expectLogs(/Released \d+ unfinished message/);

beforeEach(() => {
  engine = new FakeEngine();
  events = [];
  finished = [];
});

afterEach(async () => {
  jest.useRealTimers();
  await Promise.all(keepers.splice(0).map((keeper) => keeper.close(0)));
});

function startKeeper(handler: QueueHandlerFn<string>, options: QueueHandlerOptions = {}): KeeperWithAcks<string> {
  const queueEvents = new QueueEvents();
  queueEvents.stream$.subscribe((event) => events.push(event));
  const hooks = { finished: (ms: number) => void finished.push(ms) };
  const keeper = new KeeperWithAcks(
    engine,
    'jobs',
    handler,
    resolveConsumerSettings(options, undefined),
    { events: queueEvents, logger: new QueueLogger('warn') },
    hooks,
  );
  keepers.push(keeper);
  keeper.start();
  return keeper;
}

/** Leases `ids` from the fake engine, as a reserve would. */
async function lease(...ids: string[]): Promise<ReservedMessage<string>[]> {
  engine.push(ids, { maxAttempts: 3 });
  return (await engine.reserve<string>('jobs', 0, { count: ids.length, leaseMs: 60, maxAttempts: 3 }, [])).messages;
}

const never = () => new Promise<void>(() => undefined);

describe('LeaseKeeper on fake timers', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate', 'clearImmediate'] }));

  it('extends every running lease by leaseMs, in one call, every leaseMs / 3', async () => {
    const keeper = startKeeper(never, { leaseMs: 60 });
    const [a, b] = await lease('m1', 'm2');
    keeper.run(a);
    keeper.run(b);
    await jest.advanceTimersByTimeAsync(19);
    expect(engine.callsOf('extend')).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(engine.callsOf('extend').map((call) => [call.leases, call.leaseMs])).toEqual([[['m1', 'm2'], 60]]);
    expect(a.leaseDeadline).toBe(Date.now() + 60);
    await jest.advanceTimersByTimeAsync(40);
    expect(engine.callsOf('extend')).toHaveLength(3);
  });

  it('stops extending a lease once its handler finished (and acked)', async () => {
    const done = deferred();
    const keeper = startKeeper((payload) => (payload === 'm1' ? done.promise : never()), { leaseMs: 60 });
    const [a, b] = await lease('m1', 'm2');
    keeper.run(a);
    keeper.run(b);
    done.resolve();
    await engine.until(() => engine.acked.length === 1, 'm1 acked');
    await jest.advanceTimersByTimeAsync(20);
    expect(engine.callsOf('extend').map((call) => call.leases)).toEqual([['m2']]);
    expect(keeper.running).toBe(1);
    expect(finished).toHaveLength(1);
  });

  it('fails a handler that outlives timeoutMs: HandlerTimeoutError aborts its signal, the delivery is nacked', async () => {
    expectLogs(/failed on attempt 1 of \d+: HandlerTimeoutError/);
    let context: MessageContext | undefined;
    const handler = (_: string, c: MessageContext) => ((context = c), never());
    const keeper = startKeeper(handler, { leaseMs: 30_000, timeoutMs: 50, backoff: { type: 'fixed', delayMs: 7 } });
    const [m] = await lease('m1');
    keeper.run(m);
    await jest.advanceTimersByTimeAsync(49);
    expect(context!.signal.aborted).toBe(false);
    expect(engine.nacks).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    const reason: unknown = context!.signal.reason;
    expect(reason).toBeInstanceOf(HandlerTimeoutError);
    await engine.until(() => engine.nacks.length === 1, 'the nack');
    expect(engine.nacks).toEqual([
      { id: 'm1', attempt: 1, delayMs: 7, maxAttempts: 3, error: reason, result: 'retry' },
    ]);
    expect(keeper.running).toBe(0);
    await turns();
    // The timeout ends the handler's run for the event's duration too.
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'retried', topic: 'jobs', id: 'm1', attempt: 1, error: reason, durationMs: 50 }),
    );
  });

  it('closes at once when no handler runs: no wait for the deadline', async () => {
    const keeper = startKeeper(() => undefined);
    const [m] = await lease('m1');
    keeper.run(m);
    await engine.until(() => engine.acked.length === 1, 'm1 acked');
    let closed = false;
    const closing = keeper.close(Date.now() + 60_000).then(() => (closed = true));
    await turns();
    expect(closed).toBe(true);
    await closing;
    expect(engine.released).toEqual([]);
  });
});

describe('LeaseKeeper and context.extendLease', () => {
  it('extends through the engine; once the lease is gone it says false, reports lease-lost and aborts the signal', async () => {
    expectLogs(/Lost the lease of message m1/);
    const started = deferred<MessageContext>();
    const keeper = startKeeper((_, context) => (started.resolve(context), never()), { leaseMs: 30_000 });
    const [m] = await lease('m1');
    keeper.run(m);
    const context = await started.promise;
    await expect(context.extendLease(5_000)).resolves.toBe(true);
    expect(engine.callsOf('extend').map((call) => [call.leases, call.leaseMs])).toEqual([[['m1'], 5_000]]);
    expect(m.leaseDeadline).toBeGreaterThan(Date.now() + 4_000);

    engine.loseLease('m1');
    await expect(context.extendLease(5_000)).resolves.toBe(false);
    expect(context.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(events.filter((event) => event.type === 'lease-lost')).toEqual([
      { type: 'lease-lost', topic: 'jobs', id: 'm1', attempt: 1, error: context.signal.reason as unknown },
    ]);
  });

  it('runs durable steps: read once per delivery, again after a failed read; a refused store reports the lease lost', async () => {
    expectLogs(/Lost the lease of message m1/);
    const started = deferred<MessageContext>();
    const keeper = startKeeper((_, context) => (started.resolve(context), never()), { leaseMs: 30_000 });
    const [m] = await lease('m1');
    keeper.run(m);
    const context = await started.promise;
    engine.failNext('readSteps');
    await expect(context.step('a', () => 1)).rejects.toThrow('fake readSteps failure');
    await expect(context.step('a', () => 1)).resolves.toBe(1);
    await expect(context.step('a', () => 2)).resolves.toBe(1);
    await expect(context.step('b', () => 'two')).resolves.toBe('two');
    expect(engine.callsOf('readSteps')).toHaveLength(2);
    expect([...engine.steps.get('m1')!]).toEqual([
      ['a', '1'],
      ['b', '"two"'],
    ]);

    engine.loseLease('m1');
    let ran = 0;
    await expect(context.step('c', () => ++ran)).rejects.toBeInstanceOf(LeaseLostError);
    expect(context.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(events.filter((event) => event.type === 'lease-lost')).toHaveLength(1);
    // Known lost: the next step runs nothing.
    await expect(context.step('d', () => ++ran)).rejects.toBeInstanceOf(LeaseLostError);
    expect(ran).toBe(1);
    expect(engine.steps.get('m1')!.has('c')).toBe(false);
  });

  it('fails the first step of a delivery whose lease is already gone, running nothing', async () => {
    expectLogs(/Lost the lease of message m1/);
    const started = deferred<MessageContext>();
    const keeper = startKeeper((_, context) => (started.resolve(context), never()), { leaseMs: 30_000 });
    const [m] = await lease('m1');
    keeper.run(m);
    const context = await started.promise;
    engine.loseLease('m1');
    let ran = 0;
    await expect(context.step('a', () => ++ran)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(context.step('b', () => ++ran)).rejects.toBeInstanceOf(LeaseLostError);
    expect(ran).toBe(0);
    expect(engine.callsOf('readSteps')).toHaveLength(1);
    expect(engine.callsOf('storeStep')).toEqual([]);
    expect(events.filter((event) => event.type === 'lease-lost')).toHaveLength(1);
  });

  it('extends while the keeper closes; close waits for the handler and its ack, releasing nothing', async () => {
    const started = deferred();
    const proceed = deferred();
    let extended: boolean | undefined;
    const keeper = startKeeper(async (_, context) => {
      started.resolve();
      await proceed.promise;
      extended = await context.extendLease(1_000);
    });
    const [m] = await lease('m1');
    keeper.run(m);
    await started.promise;
    const closing = keeper.close(Date.now() + 5_000);
    proceed.resolve();
    await closing;
    expect(extended).toBe(true);
    expect(engine.calls.map((call) => call.method)).toEqual(['reserve', 'extend', 'ack']);
    expect(engine.acked).toEqual(['m1']);
    expect(engine.released).toEqual([]);
  });
});
