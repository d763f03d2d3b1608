import fc from 'fast-check';
import { deferred, turns } from '../../support/async-helpers';
import { expectLogs } from '../../support/capture-logs';
import { uniqueTopic, useRedis } from '../../support/queue-fixture';
import { HOUR_MS, LEASE_MS } from './queue-commands';
import { SERVICE_MAX_ATTEMPTS } from './queue-model';
import { RACED_ID, deliveryOutcomes } from './race-operations';
import { propertyTimeoutMs, runSettings } from './run-settings';

const OUTCOME_EVENTS = new Set(['acked', 'retried', 'dead', 'lease-lost']);

/**
 * A consumer (`consume`) whose handler the test holds: its settling and a `cancel` are released in
 * the order fast-check's scheduler picks, once the handler started or right as the consumer starts.
 * What the cancel answers, whether the handler ran and which outcome the consumer reported must be
 * those of the model's delivery with the cancel before, during or after it; the message is gone.
 */
describe("a cancel racing a consumer's delivery, against the model", () => {
  const fx = useRedis();
  // The outcomes the races cause on purpose: a failed delivery, a dead letter, a refused ack.
  expectLogs(/failed on attempt \d+ of \d+/, /went to the dead letters as failed/, /Lost the lease of message/);

  it(
    "ends the delivery with one of the model's outcomes",
    async () => {
      const queue = await fx.service({ maxAttempts: SERVICE_MAX_ATTEMPTS, keepCompleted: true });
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          fc.boolean(),
          fc.constantFrom(1, 2),
          fc.boolean(),
          fc.nat(30),
          async (s, resolves, maxAttempts, afterStart, cancelTurns) => {
            const topic = uniqueTopic('delivery');
            const events: string[] = [];
            const subscription = queue.events$.subscribe((event) => {
              if (event.topic === topic && event.id === RACED_ID && OUTCOME_EVENTS.has(event.type))
                events.push(event.type);
            });
            let runs = 0;
            let abortedWhenSettled: boolean | undefined;
            const started = deferred();
            await queue.push(topic, 0, { id: RACED_ID, maxAttempts });
            const consumer = queue.consume(
              topic,
              async (_payload, context) => {
                runs += 1;
                started.resolve();
                await s.schedule(Promise.resolve(), 'handler settles');
                abortedWhenSettled = context.signal.aborted;
                if (!resolves) throw new Error('rejected by the test');
              },
              { concurrency: 1, maxAttempts, leaseMs: LEASE_MS, backoff: { type: 'fixed', delayMs: HOUR_MS } },
            );
            if (afterStart) await started.promise;
            const cancelled = await s.waitFor(
              s
                .schedule(Promise.resolve(), 'cancel')
                // Event-loop turns before the cancel is sent, so that it also lands after the consumer's ack.
                .then(() => turns(cancelTurns))
                .then(() => queue.cancel(topic, RACED_ID)),
            );
            await s.waitFor(consumer.close(10_000));
            subscription.unsubscribe();

            // A handler that settled before its signal aborted has its ack refused, reported as lease-lost.
            const lostLease = events.includes('lease-lost');
            const outcomes = events.filter((type) => type !== 'lease-lost');
            const observed = { cancelled, events: outcomes, ran: runs > 0 };
            const explained = deliveryOutcomes(maxAttempts, resolves).some(
              (outcome) =>
                outcome.cancelled === cancelled &&
                JSON.stringify(outcome.events) === JSON.stringify(outcomes) &&
                (outcome.handler === 'may run' || (outcome.handler === 'ran') === observed.ran) &&
                (!lostLease || (outcome.handler === 'may run' && abortedWhenSettled === false)),
            );
            expect({ observed, lostLease, explained }).toEqual({ observed, lostLease, explained: true });
            expect(runs).toBeLessThanOrEqual(1);
            expect(await queue.get(topic, RACED_ID)).toBeNull();
          },
        ),
        runSettings(50),
      );
    },
    propertyTimeoutMs(50),
  );
});
