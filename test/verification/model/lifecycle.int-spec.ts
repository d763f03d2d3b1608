import fc from 'fast-check';
import { expectLogs } from '../../support/capture-logs';
import { uniqueTopic, useRedis } from '../../support/queue-fixture';
import { queueCommands, type RunReal } from './queue-commands';
import { QueueModel, SERVICE_MAX_ATTEMPTS } from './queue-model';
import { commandsReplayPath, propertyTimeoutMs, runSettings } from './run-settings';

/**
 * Model-based test of one topic's life through the public API: generated sequences of pushes (with
 * and without ids, delayed, prioritised, keyed), flows, takes and their outcomes, cancels and pauses;
 * after each command every `get`, `list` and `stats` answer must be the model's. A failure shrinks to
 * its shortest sequence and prints fast-check's seed, path and the sequence's replayPath: replay it
 * with MODEL_SEED, MODEL_PATH and MODEL_REPLAY_PATH (and MODEL_RUNS as it ran); MODEL_RUNS=4000 for a
 * longer hunt (about 2 minutes here).
 */
describe('the queue against its model', () => {
  const fx = useRedis();
  // A failed or cancelled child dead-letters its parent, which the library logs as an error.
  expectLogs(/went to the dead letters as child-failed/);

  it(
    'answers every generated sequence of commands as the model does',
    async () => {
      const queue = await fx.service({ maxAttempts: SERVICE_MAX_ATTEMPTS, keepCompleted: true });
      await fc.assert(
        fc.asyncProperty(
          fc.commands(queueCommands, { maxCommands: 25, size: 'max', ...commandsReplayPath() }),
          (commands) =>
            fc.asyncModelRun(
              () => ({
                model: new QueueModel(),
                real: { queue, topic: uniqueTopic('model'), handles: new Map(), seen: new Set() } satisfies RunReal,
              }),
              commands,
            ),
        ),
        runSettings(150),
      );
    },
    propertyTimeoutMs(150),
  );
});
