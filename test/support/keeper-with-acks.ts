import { AckBatcher } from '../../lib/consumer/ack-batcher';
import type { ConsumerReporting } from '../../lib/consumer/failed-deliveries';
import type { InFlight, KeeperHooks } from '../../lib/consumer/in-flight';
import { LeaseKeeper } from '../../lib/consumer/lease-keeper';
import type { ConsumerEngine } from '../../lib/engine/consumer-engine';
import type { QueueHandlerFn, ReservedMessage } from '../../lib/interfaces';
import type { ConsumerSettings } from '../../lib/queue/settings';

/**
 * A LeaseKeeper with the ack batch it hands its acks to, wired as TopicConsumer wires them (no
 * poller): `close` waits for the keeper, then drains the batch.
 */
export class KeeperWithAcks<T> {
  readonly keeper: LeaseKeeper<T>;
  readonly acks: AckBatcher<InFlight<T>>;

  constructor(
    engine: ConsumerEngine,
    topic: string,
    handler: QueueHandlerFn<T>,
    settings: ConsumerSettings,
    report: ConsumerReporting,
    hooks: Partial<Pick<KeeperHooks<T>, 'finished' | 'held'>> = {},
  ) {
    this.keeper = new LeaseKeeper(engine, topic, handler, settings, report, {
      finished: (ms) => hooks.finished?.(ms),
      held: (ms) => hooks.held?.(ms),
      completed: (entry) => this.acks.ack(entry),
    });
    this.acks = new AckBatcher(this.keeper.ackRoute);
  }

  get running(): number {
    return this.keeper.running;
  }

  start(): void {
    this.keeper.start();
  }

  run(message: ReservedMessage<T>): void {
    this.keeper.run(message);
  }

  async close(deadline: number): Promise<void> {
    await this.keeper.close(deadline);
    await this.acks.drain();
  }
}
