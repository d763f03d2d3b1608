import type { ScheduleStore } from '../engine/stores/schedule-store';
import { InvalidOptionError } from '../errors';
import type { RedisAckQueueEvent, RedisAckQueueOptions } from '../interfaces';
import type { QueueLogger } from '../observability/queue-logger';
import type { ScheduleChanges } from '../queue/queue-schedules';
import { SchedulerLoop } from './scheduler-loop';

/**
 * When a service runs its scheduler loop: while it has consumers, or for good once it
 * upserted a schedule, and never when the `scheduler` option is false.
 */
export class ServiceScheduler implements ScheduleChanges {
  private readonly loop: SchedulerLoop;
  /** This service upserted a schedule: its loop runs until close(), consumers or not. */
  private changedSchedules = false;

  constructor(
    private readonly enabled: boolean,
    store: ScheduleStore,
    logger: QueueLogger,
    emit: (event: RedisAckQueueEvent) => void,
    hasConsumers: () => boolean,
  ) {
    this.loop = new SchedulerLoop(store, logger, emit, () => this.changedSchedules || hasConsumers());
  }

  /** Called on every consume(): a consumer's topic may have schedules. */
  start(): void {
    if (this.enabled) this.loop.start();
  }

  upserted(): void {
    this.changedSchedules = true;
    this.start();
    this.loop.nudge();
  }

  removed(): void {
    this.loop.nudge();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}

/**
 * Whether the `scheduler` option leaves the loop on; checked before anything is set up.
 * @throws {InvalidOptionError} when the option is not a boolean.
 */
export function schedulerEnabled(options: RedisAckQueueOptions): boolean {
  const { scheduler } = options;
  if (scheduler !== undefined && typeof scheduler !== 'boolean')
    throw new InvalidOptionError('scheduler', scheduler, 'true or false');
  return scheduler !== false;
}
