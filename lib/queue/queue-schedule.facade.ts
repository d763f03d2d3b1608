import { SchedulerLoop } from '../consumer/scheduler-loop';
import { ScheduleStore, type StoredSchedule } from '../engine/schedule-store';
import { InvalidOptionError } from '../errors';
import type {
  PushResult,
  RedisAckQueueOptions,
  RedisAckQueueScheduleApi,
  ScheduleInfo,
  ScheduleOptions,
} from '../interfaces';
import { QueueLogger } from '../observability/queue-logger';
import { QueuePauseFacade } from './queue-pause.facade';
import { assertScheduleName, decodeDefinition, encodeDefinition, resolveSchedule } from './schedules/schedule-spec';
import { nextTick } from './schedules/schedule-times';
import { assertTopic } from './validation';

/**
 * Repeating and cron schedules (see {@link RedisAckQueueScheduleApi}). A layer of
 * {@link RedisAckQueueService}, not used on its own.
 * @internal
 */
export abstract class QueueScheduleFacade extends QueuePauseFacade implements RedisAckQueueScheduleApi {
  /** @internal */
  protected readonly scheduleStore: ScheduleStore;
  /** @internal */
  protected readonly scheduler: SchedulerLoop;
  private readonly schedulerEnabled: boolean;
  /** This service upserted a schedule: its scheduler runs until close(), consumers or not. */
  private changedSchedules = false;

  constructor(options: RedisAckQueueOptions = {}) {
    super(checkSchedulerOption(options));
    this.schedulerEnabled = options?.scheduler !== false;
    const { client } = this.connection;
    this.scheduleStore = new ScheduleStore(client, this.engine.scripts, this.engine.layouts, this.settings.prefix);
    this.scheduler = new SchedulerLoop(
      this.scheduleStore,
      new QueueLogger(this.settings.logLevel),
      (event) => this.events.emit(event),
      () => this.changedSchedules || this.consumers.size > 0,
    );
  }

  async upsertSchedule(topic: string, name: string, options: ScheduleOptions): Promise<ScheduleInfo> {
    this.assertOpen('upsert a schedule');
    assertTopic(topic);
    assertScheduleName(topic, name);
    const spec = resolveSchedule(topic, name, options, this.settings.maxPayloadBytes);
    const definition = encodeDefinition(spec);
    const store = this.scheduleStore;
    const stored = await this.connection.within(
      'upsert a schedule',
      topic,
      (async () => store.upsert(topic, name, definition, nextTick(spec, await store.serverNow())))(),
    );
    this.changedSchedules = true;
    this.startScheduler();
    this.scheduler.nudge();
    return scheduleInfo(topic, stored)!;
  }

  async removeSchedule(topic: string, name: string): Promise<boolean> {
    this.assertOpen('remove a schedule');
    assertTopic(topic);
    assertScheduleName(topic, name);
    const removed = await this.connection.within('remove a schedule', topic, this.scheduleStore.remove(topic, name));
    this.scheduler.nudge();
    return removed;
  }

  async runScheduleNow(topic: string, name: string): Promise<PushResult | null> {
    this.assertOpen('run a schedule');
    assertTopic(topic);
    assertScheduleName(topic, name);
    const pushed = await this.connection.within('run a schedule', topic, this.scheduleStore.runNow(topic, name));
    if (pushed && !pushed.duplicate) this.events.emit({ type: 'pushed', topic, id: pushed.id });
    return pushed;
  }

  async schedules(topic?: string): Promise<ScheduleInfo[]> {
    if (topic !== undefined) assertTopic(topic);
    const store = this.scheduleStore;
    const read = async () => {
      const infos: ScheduleInfo[] = [];
      for (const t of topic === undefined ? await store.topics() : [topic]) {
        for (const stored of await store.list(t)) {
          const info = scheduleInfo(t, stored);
          if (info) infos.push(info);
        }
      }
      return infos;
    };
    return this.connection.within('list schedules', topic, read());
  }

  /**
   * Starts this service's scheduler (unless the `scheduler` option is false); the service
   * calls it on every `consume()` and `upsertSchedule()`. It runs while the service has
   * consumers, or for good once it upserted a schedule.
   * @internal
   */
  protected startScheduler(): void {
    if (this.schedulerEnabled && !this.closing) this.scheduler.start();
  }
}

/** Checks the `scheduler` option before anything is set up. */
function checkSchedulerOption(options: RedisAckQueueOptions): RedisAckQueueOptions {
  const scheduler = options?.scheduler;
  if (scheduler !== undefined && typeof scheduler !== 'boolean')
    throw new InvalidOptionError('scheduler', scheduler, 'true or false');
  return options;
}

/** The public view of a stored schedule; undefined for a definition this library did not write. */
function scheduleInfo(topic: string, stored: StoredSchedule): ScheduleInfo | undefined {
  const spec = decodeDefinition(stored.definition);
  if (!spec) return undefined;
  return {
    topic,
    name: stored.name,
    ...(spec.cron !== undefined && { cron: spec.cron }),
    ...(spec.everyMs !== undefined && { everyMs: spec.everyMs }),
    ...(spec.tz !== undefined && { tz: spec.tz }),
    nextRunAt: stored.nextRunAt,
    ...(stored.lastRunAt !== null && { lastRunAt: stored.lastRunAt }),
  };
}
