import { QueueLogger } from '../../lib/observability/queue-logger';
import { TopicConsumer } from '../../lib/consumer/topic-consumer';
import {
  LeaseLostError,
  RedisUnavailableError,
  type MessageContext,
  type QueueHandlerFn,
  type QueueHandlerOptions,
  type RedisAckQueueEvent,
} from '../../lib';
import { QueueEvents } from '../../lib/queue/queue-events';
import { resolveConsumerSettings } from '../../lib/queue/settings';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { deferred, turns } from '../support/async-helpers';
import { FakeEngine } from '../support/fake-engine';
import { FakeWakeSignal } from '../support/fake-wake-signal';

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `m${from + i}`);
const byNumberDescending = (a: string, b: string) => Number(b.slice(1)) - Number(a.slice(1));

let engine: FakeEngine;
let wake: FakeWakeSignal;
let events: RedisAckQueueEvent[];
let closed: number;
const pollers: TopicConsumer<string>[] = [];
// Closing a poller whose handler still runs hands its message back, with this warning.
expectLogs(/Released \d+ unfinished message/);

beforeEach(() => {
  // Handlers take no measurable time here, whatever the machine's load: the prefetch target
  // (about 5 ms of handler work) is then the batch size, and the tests see the same prefetch every run.
  jest.spyOn(performance, 'now').mockReturnValue(0);
  engine = new FakeEngine();
  wake = new FakeWakeSignal();
  engine.onReady = () => wake.wake();
  events = [];
  closed = 0;
});

afterEach(async () => {
  await Promise.all(pollers.splice(0).map((poller) => poller.close(0)));
  jest.restoreAllMocks();
});

function start(handler: QueueHandlerFn<string>, options: QueueHandlerOptions = {}): TopicConsumer<string> {
  const queueEvents = new QueueEvents();
  queueEvents.stream$.subscribe((event) => events.push(event));
  const settings = resolveConsumerSettings(options, undefined);
  const poller = new TopicConsumer('jobs', handler, settings, {
    engine,
    wake,
    events: queueEvents,
    logger: new QueueLogger('log'),
    onClosed: () => closed++,
  });
  pollers.push(poller);
  poller.start();
  return poller;
}

/** A handler that stalls on message `on` until `release()` (or rejects when its signal aborts). */
function stallOn(on: string) {
  const handled: string[] = [];
  const gate = deferred();
  const stalled = deferred<MessageContext>();
  const handler = async (payload: string, context: MessageContext) => {
    handled.push(payload);
    if (payload !== on) return;
    stalled.resolve(context);
    await Promise.race([
      gate.promise,
      new Promise((_, reject) =>
        context.signal.addEventListener('abort', () => reject(context.signal.reason as Error)),
      ),
    ]);
  };
  return { handled, handler, release: gate.resolve, stalled: stalled.promise };
}

describe('QueuePoller against a fake engine', () => {
  it('handles messages in FIFO order at concurrency 1, many per reserve (prefetch)', async () => {
    engine.push(ids(1, 200));
    const handled: string[] = [];
    let running = 0;
    let most = 0;
    start(async (payload) => {
      most = Math.max(most, ++running);
      handled.push(payload);
      await Promise.resolve();
      running--;
    });
    await engine.until(() => engine.acked.length === 200, 'all 200 acked');
    expect(handled).toEqual(ids(1, 200));
    expect(most).toBe(1);
    // The first reserve asks for one (no handler time known yet); then the window is concurrency plus a
    // prefetch of batchSize, half of it per reserve: 9 reserves in all, where no prefetch takes 201.
    const counts = engine.callsOf('reserve').map((call) => call.count!);
    expect(counts[0]).toBe(1);
    expect(Math.max(...counts)).toBe(26);
    expect(counts.length).toBeLessThanOrEqual(12);
  });

  it('under a rate limit reserves only what can start now: no message waits in a prefetch', async () => {
    engine.rateLimited = true;
    engine.push(ids(1, 60));
    const handled: string[] = [];
    start(async (payload) => {
      handled.push(payload);
      await Promise.resolve();
    });
    await engine.until(() => engine.acked.length === 60, 'all 60 acked');
    expect(handled).toEqual(ids(1, 60));
    // A rate limit counted each at its reserve: one slot, one message per reserve, none handed back.
    expect(Math.max(...engine.callsOf('reserve').map((call) => call.count!))).toBe(1);
    expect(engine.released).toEqual([]);
  });

  it('hands prefetched messages back, in order, once they waited a heartbeat behind a stalled handler', async () => {
    engine.push(ids(1, 10));
    const { handled, handler, release } = stallOn('m2');
    start(handler, { leaseMs: 60 });
    await engine.until(
      () => engine.released.length > 0 && engine.leases.size === 1,
      'every prefetched message released',
    );
    // Released last first, so they sit at the head of ready in their order; none is reserved again meanwhile.
    expect(engine.readyIds()).toEqual(ids(3, 10));
    for (const call of engine.callsOf('release'))
      expect(call.leases).toEqual([...call.leases].sort(byNumberDescending));
    const reservedAt = engine.calls.find((call) => call.reserved.includes('m3'))!.at;
    expect(engine.callsOf('release')[0].at - reservedAt).toBeGreaterThanOrEqual(60 / 3 - 2);
    expect(handled).toEqual(['m1', 'm2']);

    release();
    await engine.until(() => engine.acked.length === 10, 'all 10 acked');
    expect(handled).toEqual(ids(1, 10));
  });

  it('on close, hands back the prefetch and the unfinished handler (signal aborted), and counts nothing', async () => {
    engine.push(ids(1, 10));
    const { handler, stalled } = stallOn('m2');
    const poller = start(handler, { leaseMs: 30_000 });
    const context = await stalled;
    await engine.until(
      () => engine.acked.length === 1 && engine.leases.size >= 2,
      'm1 acked, m2 running, some prefetched',
    );

    await poller.close(30);
    // The prefetch first, then the handler's lease: all back at the head of ready, in order.
    expect(engine.callsOf('release').length).toBeGreaterThanOrEqual(2);
    expect(engine.callsOf('release').at(-1)!.leases).toEqual(['m2']);
    expect(engine.readyIds()).toEqual(ids(2, 10));
    expect(engine.leases.size).toBe(0);
    expect(context.signal.aborted).toBe(true);
    expect((context.signal.reason as Error).message).toMatch(/shutting down/);
    // The handler rejected on its abort: that late outcome is no failed attempt.
    await turns();
    expect(engine.nacks).toEqual([]);
    expect(engine.acked).toEqual(['m1']);
    expect(wake.closed).toBe(true);
    expect(closed).toBe(1);
  });

  it('on close, lets a running handler finish within drainMs and waits for its ack', async () => {
    engine.push(['m1']);
    const started = deferred();
    const finish = deferred();
    const poller = start(async () => {
      started.resolve();
      await finish.promise;
    });
    await started.promise;
    const openAcks = engine.hold('ack');
    let done = false;
    const closing = poller.close(5_000).then(() => (done = true));
    finish.resolve();
    await engine.until(() => engine.callsOf('ack').length === 1, 'the ack sent');
    await turns();
    expect(done).toBe(false);
    openAcks();
    await closing;
    expect(engine.acked).toEqual(['m1']);
    expect(engine.released).toEqual([]);
  });

  it('closes an idle poller at once, not after drainMs', async () => {
    const poller = start(() => undefined);
    await wake.untilWaits(1);
    const began = Date.now();
    await poller.close(10_000);
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(closed).toBe(1);
  });

  it('reports a refused heartbeat as lease-lost and aborts the handler, once', async () => {
    expectLogs(/Lost the lease of message m1/);
    engine.push(['m1']);
    const { handler, stalled } = stallOn('m1');
    start(handler, { leaseMs: 60 });
    const context = await stalled;
    engine.loseLease('m1');
    await engine.until(() => engine.nacks.length === 1, 'the aborted handler nacked');
    expect(context.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(engine.nacks[0].result).toBe('lost');
    expect(events.filter((e) => e.type === 'lease-lost')).toEqual([
      { type: 'lease-lost', topic: 'jobs', id: 'm1', attempt: 1, error: context.signal.reason as unknown },
    ]);
  });

  it('waits on the wake signal when nothing is ready, for the due time, and reserves again when woken', async () => {
    engine.nextDueInMs = 300;
    const handled: string[] = [];
    start((payload) => void handled.push(payload));
    await wake.untilWaits(1);
    expect(wake.waits[0]).toBeGreaterThan(250);
    expect(wake.waits[0]).toBeLessThanOrEqual(300);
    engine.push(['m1']);
    await turns();
    expect(engine.callsOf('reserve')).toHaveLength(1);

    wake.wake();
    await engine.until(() => engine.acked.length === 1, 'm1 acked after the wake-up');
    expect(handled).toEqual(['m1']);
  });

  it('pauses after a failing reserve (one error event per outage) and resumes', async () => {
    expectLogs(/Consumer of "jobs" paused/);
    engine.failNext('reserve', new Error('connection reset'));
    engine.failNext('reserve', new Error('connection reset'));
    engine.push(['m1']);
    start(() => undefined);
    await engine.until(() => engine.acked.length === 1, 'm1 acked after the outage');
    const [first, second, third] = engine.callsOf('reserve').map((call) => call.at);
    expect(second - first).toBeGreaterThanOrEqual(190);
    expect(third - second).toBeGreaterThanOrEqual(390);
    const errors = events.filter((e) => e.type === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0].error).toBeInstanceOf(RedisUnavailableError);
    expect(loggedLines(/paused/)).toHaveLength(1);
    expect(loggedLines(/Consumer of "jobs" resumed/)).toHaveLength(1);
  });
});
