import type { MessageContext } from '../../lib';
import { expectLogs } from '../support/capture-logs';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { gate } from '../support/gate';

describe('close(drainMs) of a service used without Nest', () => {
  const fx = useRedis();

  it('hands an unfinished message back to ready at once, without counting the attempt', async () => {
    // A lease far longer than the test: only the release can make the message ready again.
    const queue = await fx.service({ leaseMs: 120_000 });
    const topic = uniqueTopic();
    const started = gate<MessageContext>();
    queue.consume(topic, (_payload, context) => {
      started.open(context);
      return new Promise(() => undefined); // never settles
    });
    await queue.push(topic, 'slow');
    const context = await started.promise;
    expectLogs(/Released 1 unfinished message/);
    const closing = queue.close(300);
    // While the drain runs the handler still holds its lease and may extend it.
    expect(await context.extendLease(120_000)).toBe(true);
    await closing;
    expect(context.signal.aborted).toBe(true);
    const survivor = await fx.service();
    expect(await survivor.stats(topic)).toEqual({ ready: 1, delayed: 0, leased: 0, dead: 0, paused: false });
    const [again] = await survivor.reserve(topic);
    expect(again).toMatchObject({ payload: 'slow', attempt: 1 });
  });

  it('acks what finishes within the drain, and ends as soon as nothing runs', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const started = gate();
    const finish = gate();
    queue.consume(topic, async () => {
      started.open();
      await finish.promise;
    });
    await queue.push(topic, 'quick');
    await started.promise;
    const closing = queue.close(30_000);
    const closeStarted = Date.now();
    finish.open();
    await closing;
    // The drain bound is 30 s: close returns once the handler is done, not at the bound.
    expect(Date.now() - closeStarted).toBeLessThan(5_000);
    const survivor = await fx.service();
    expect(await survivor.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
  });
});
