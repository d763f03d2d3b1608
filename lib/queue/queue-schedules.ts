import { sealedPushBody } from '../engine/codecs/wire-format';
import type { StoredSchedule } from '../engine/stores/schedule-store';
import type { PushResult, ScheduleInfo, ScheduleOptions } from '../interfaces';
import type { QueueCore } from './queue-core';
import { assertScheduleName, decodeDefinition, encodeDefinition, resolveSchedule } from './schedules/schedule-spec';
import { ticksAfter } from './schedules/schedule-times';
import { assertTopic } from './validation';

/** What the schedules part tells the service's scheduler loop (which runs in the consumer layer). */
export interface ScheduleChanges {
  /** A schedule was upserted: the loop runs from now until close, consumers or not. */
  upserted(): void;
  /** A schedule was removed: the loop looks again at what is due. */
  removed(): void;
}

/** Repeating and cron schedules (see RedisAckQueueScheduleApi): a part of RedisAckQueueService. */
export class QueueSchedules {
  constructor(
    private readonly core: QueueCore,
    private readonly changes: ScheduleChanges,
  ) {}

  /** `declared`: by code (the module's `schedules`), so a later startup that no longer declares it removes it. */
  async upsertSchedule(topic: string, name: string, options: ScheduleOptions, declared = false): Promise<ScheduleInfo> {
    const { schedules: store } = this.core.engine;
    const stored = await this.core.call('upsert a schedule', topic, async () => {
      assertTopic(topic);
      assertScheduleName(topic, name);
      const spec = resolveSchedule(topic, name, options, this.core.settings.maxPayloadBytes);
      // Each tick's body is sealed once here: the ticks copy it as it is.
      if (this.core.codecs.writer(topic))
        spec.body = `{${sealedPushBody(await this.core.codecs.seal(topic, spec.body), '}')}`;
      const definition = encodeDefinition({ ...spec, declared });
      const cronTicks =
        spec.cron === undefined ? undefined : (afterMs: number, count: number) => ticksAfter(spec, afterMs, count);
      return store.upsert(topic, name, definition, cronTicks);
    });
    this.changes.upserted();
    return scheduleInfo(topic, stored)!;
  }

  async removeSchedule(topic: string, name: string): Promise<boolean> {
    const removed = await this.core.call('remove a schedule', topic, () => {
      assertTopic(topic);
      assertScheduleName(topic, name);
      return this.core.engine.schedules.remove(topic, name);
    });
    this.changes.removed();
    return removed;
  }

  /**
   * Removes the schedules declared by code (declared: true) whose `<topic>\0<name>` is not in
   * `kept`; one changed since (upserted by hand) stays. Resolves how many went.
   */
  async withdrawSchedules(kept: ReadonlySet<string>): Promise<number> {
    const { schedules: store } = this.core.engine;
    const withdrawn = await this.core.call('remove a schedule', undefined, async () => {
      let count = 0;
      for (const topic of await store.topics()) {
        for (const stored of await store.list(topic)) {
          if (kept.has(`${topic}\0${stored.name}`) || !decodeDefinition(stored.definition)?.declared) continue;
          if (await store.remove(topic, stored.name, stored.definition)) count++;
        }
      }
      return count;
    });
    if (withdrawn > 0) this.changes.removed();
    return withdrawn;
  }

  async runScheduleNow(topic: string, name: string): Promise<PushResult | null> {
    const pushed = await this.core.call('run a schedule', topic, () => {
      assertTopic(topic);
      assertScheduleName(topic, name);
      return this.core.engine.schedules.runNow(topic, name);
    });
    if (pushed && !pushed.duplicate) {
      this.core.events.emit({ type: 'pushed', topic, id: pushed.id });
      this.core.events.tally.pushed(topic, 1);
    }
    return pushed;
  }

  schedules(topic?: string): Promise<ScheduleInfo[]> {
    const { schedules: store } = this.core.engine;
    return this.core.call('list schedules', topic, async () => {
      if (topic !== undefined) assertTopic(topic);
      const infos: ScheduleInfo[] = [];
      for (const t of topic === undefined ? await store.topics() : [topic]) {
        for (const stored of await store.list(t)) {
          const info = scheduleInfo(t, stored);
          if (info) infos.push(info);
        }
      }
      return infos;
    });
  }
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
    ...(spec.expiresInMs !== undefined && { expiresInMs: spec.expiresInMs, onExpire: spec.onExpire ?? 'dead-letter' }),
    ...(spec.declared && { declared: true as const }),
  };
}
