import { Observable, of, throwError, timer } from 'rxjs';
import { concatWith, map } from 'rxjs/operators';
import { expectLogs } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('handlers that return an Observable', () => {
  const fx = useRedis();

  it('acks when the Observable completes, not when it is returned', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    let finish!: () => void;
    let subscribed = false;
    const consumer = queue.consume(
      topic,
      () =>
        new Observable<string>((subscriber) => {
          subscribed = true;
          subscriber.next('first value');
          finish = () => subscriber.complete();
        }),
    );
    await queue.push(topic, 'x');
    await eventually(() => subscribed);
    // A value came, the Observable did not complete: still leased.
    await eventually(async () => (await queue.stats(topic)).leased === 1);
    finish();
    await queue.waitUntilIdle(topic);
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
    await consumer.close();
  });

  it('acks one that completes without a value (not an EmptyError), and one with several values', async () => {
    const queue = await fx.service();
    const topic = uniqueTopic();
    let finish: (() => void) | undefined;
    const consumer = queue.consume<string>(
      topic,
      (payload) =>
        payload === 'empty'
          ? new Observable<never>((subscriber) => void (finish = () => subscriber.complete()))
          : timer(20).pipe(
              map(() => 1),
              concatWith(of(2, 3)),
            ),
      { maxAttempts: 1, concurrency: 2 },
    );
    await queue.pushMany(topic, [{ payload: 'empty' }, { payload: 'values' }]);
    await eventually(() => finish !== undefined);
    await eventually(async () => (await queue.stats(topic)).leased === 1);
    finish!();
    await queue.waitUntilIdle(topic);
    // maxAttempts 1: a completion taken for a failure would have left a dead letter.
    expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
    await consumer.close();
  });

  it('fails the delivery when the Observable errors, after values or none: retried, then dead with its error', async () => {
    expectLogs(/failed on attempt 1 of 2/, /went to the dead letters as failed on attempt 2/);
    const queue = await fx.service({ maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 } });
    const topic = uniqueTopic();
    const consumer = queue.consume(topic, (_payload, context) =>
      context.attempt === 1
        ? throwError(() => new Error('stream failed at once'))
        : of('a value').pipe(concatWith(throwError(() => new Error('stream failed late')))),
    );
    await queue.push(topic, 'x');
    await queue.waitUntilIdle(topic);
    const [letter] = await queue.deadLetters(topic);
    expect(letter).toMatchObject({ reason: 'failed', attempt: 2 });
    expect(letter.error).toMatch(/^Error: stream failed late/);
    await consumer.close();
  });
});
