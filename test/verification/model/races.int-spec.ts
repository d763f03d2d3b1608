import fc from 'fast-check';
import { eventually, uniqueTopic, useRedis } from '../../support/queue-fixture';
import { expectAgreement } from './model-checks';
import { LEASE_MS } from './queue-commands';
import { QueueModel, SERVICE_MAX_ATTEMPTS } from './queue-model';
import { RACED_ID, type RaceKind, type RaceReal, linearizations, runOperation } from './race-operations';
import { propertyTimeoutMs, runSettings } from './run-settings';

/** The lease of a message that will expire during the race's set-up: the shortest `reserve` allows. */
const SHORT_LEASE_MS = 10;

type Lease = 'none' | 'held' | 'expired';

/** Operations that make sense for each set-up: settles need a handle; a take would make a second one. */
const kindsFor: Record<Lease, RaceKind[]> = {
  none: ['cancel', 'push', 'take'],
  held: ['cancel', 'resolve', 'reject', 'release', 'push'],
  expired: ['cancel', 'resolve', 'reject', 'release', 'take'],
};

const race = fc.constantFrom<Lease>('none', 'held', 'expired').chain((lease) =>
  fc.record({
    lease: fc.constant(lease),
    maxAttempts: fc.constantFrom(1, 2),
    operations: fc.array(
      fc.record({
        kind: fc.constantFrom(...kindsFor[lease]),
        service: fc.constantFrom<0 | 1>(0, 1),
        payload: fc.nat(9),
      }),
      { minLength: 2, maxLength: 4 },
    ),
  }),
);

/**
 * Concurrent operations on one message, released in an order fast-check's scheduler chooses and
 * sent by two services: whatever Redis ran first, the answers and the state left must be those of
 * some sequential order of the same operations in the model (cancel racing an ack, an ack racing
 * the loss of an expired lease to a new take, two pushes of one id).
 */
describe('races on one message against the model', () => {
  const fx = useRedis();

  it(
    'leaves an outcome that some sequential order of the operations explains',
    async () => {
      const services = [
        await fx.service({ maxAttempts: SERVICE_MAX_ATTEMPTS, keepCompleted: true }),
        await fx.service({ maxAttempts: SERVICE_MAX_ATTEMPTS, keepCompleted: true }),
      ];
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), race, async (s, { lease, maxAttempts, operations }) => {
          const real: RaceReal = { services, topic: uniqueTopic('race') };
          const model = new QueueModel();
          await services[0].push(real.topic, 0, { id: RACED_ID, maxAttempts });
          model.push({ id: RACED_ID, payload: 0, delayed: false, priority: 0, maxAttempts }, RACED_ID);
          if (lease !== 'none') {
            const leaseMs = lease === 'expired' ? SHORT_LEASE_MS : LEASE_MS;
            [real.handle] = await services[0].reserve(real.topic, { leaseMs });
            model.reserve(1);
          }
          if (lease === 'expired') {
            // The lease's deadline is on the server's clock: wait until that clock has passed it.
            const deadline = real.handle!.leaseDeadline;
            await eventually(async () => {
              const [seconds, micros] = await fx.redis.time();
              return Number(seconds) * 1000 + Number(micros) / 1000 > deadline;
            });
            model.expire(RACED_ID);
          }

          const answers = operations.map((operation) =>
            s
              .schedule(Promise.resolve(), `${operation.kind}@${operation.service}`)
              .then(() => runOperation(real, operation)),
          );
          await s.waitIdle();
          const answered = await Promise.all(answers);

          const explaining = linearizations(model, operations, answered);
          expect({ answered, linearizable: explaining.length > 0 }).toEqual({ answered, linearizable: true });
          // One of the orders that explain the answers must also explain the state left.
          const failures: unknown[] = [];
          for (const after of explaining) {
            try {
              await expectAgreement(after, { queue: services[0], topic: real.topic, handles: new Map() }, [RACED_ID]);
              return;
            } catch (error) {
              failures.push(error);
            }
          }
          throw failures[0];
        }),
        runSettings(100),
      );
    },
    propertyTimeoutMs(100),
  );
});
