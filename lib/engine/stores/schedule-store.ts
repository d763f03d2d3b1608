import { sendCommand } from '../redis/redis-command';
import type { RedisClient } from '../redis/connection';
import { idInPartition } from '../keys/partitions';
import { scheduleIndexKeys, type QueueKeys, type ScheduleIndexKeys } from '../keys/queue-keys';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayout, TopicLayouts } from '../scripts/topic-layouts';

/** One schedule as Redis holds it: its definition text and its state (ms, server clock). */
export interface StoredSchedule {
  name: string;
  definition: string;
  /** The pending tick; null when none is left. */
  nextRunAt: number | null;
  /** The last tick that pushed a message; null before the first. */
  lastRunAt: number | null;
}

/** What schedule-tick.lua did: ran the tick, found it stale (reload), or found it not due yet. */
export type TickOutcome = 'ran' | 'stale' | 'early';

const OUTCOMES: TickOutcome[] = ['stale', 'ran', 'early'];
/** How far before this process's estimate of the server clock a cron upsert's candidate ticks start (ms). */
const CLOCK_SLACK_MS = 5_000;
/** How many candidate ticks a cron upsert sends: enough to reach past the slack for a tick every second. */
const CRON_CANDIDATES = 16;
const orNull = (value: number | string): number | null => (Number(value) < 0 ? null : Number(value));

/**
 * Schedules in Redis: one script per change, each in the slot of the topic's first partition
 * (the topic's own slot when it has one), so a tick checks its schedule and pushes its
 * message in one atomic call. The tick's id is made to route to that partition. The index of
 * topics with schedules is one key set of its own slot.
 */
export class ScheduleStore {
  private readonly index: ScheduleIndexKeys;
  /** Redis server time minus local time (ms), from the last script reply. */
  private offsetMs: number | undefined;

  constructor(
    private readonly client: RedisClient,
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    prefix: string,
  ) {
    this.index = scheduleIndexKeys(prefix);
  }

  /** The Redis server's clock now (ms): from the offset seen in the last reply, or asked by TIME. */
  async serverNow(): Promise<number> {
    if (this.offsetMs === undefined) {
      const [seconds, micros] = await sendCommand(this.client, 'read the server clock', undefined, () =>
        this.client.time(),
      );
      this.observe(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
    }
    return Date.now() + this.offsetMs!;
  }

  /** The tick's message id: `schedule:<name>:<tick>`, plus `#<k>` when needed to route it to the schedule's slot. */
  tickId(topic: string, name: string, tick: number): string {
    return this.routed(topic, `schedule:${name}:${tick}`);
  }

  /**
   * Pushes the schedule's message out of turn, with the id `schedule:<name>@<now>` (`@` is in
   * no schedule name, so it never meets a tick's id); its ticks stay as they are. Null when
   * the topic has no such schedule.
   */
  async runNow(topic: string, name: string): Promise<{ id: string; duplicate: boolean } | null> {
    const layout = await this.verified(topic, 'run a schedule');
    const id = this.routed(topic, `schedule:${name}@${await this.serverNow()}`);
    const [outcome, now] = await this.scripts.run<number[]>('scheduleRun', topic, this.slot(layout), [name, id]);
    this.observe(now);
    if (outcome < 0) return null;
    if (outcome === 1) await this.scripts.wakeHome(layout);
    return { id, duplicate: outcome === 0 };
  }

  /** `id`, plus `#<k>` when needed to route it to the partition of the topic's schedules. */
  private routed(topic: string, id: string): string {
    return idInPartition(id, 0, this.layouts.get(topic).partitions.length);
  }

  /**
   * Stores a definition (see schedule-upsert.lua: the script sets the pending tick by the
   * server clock). `cronTicks` gives a cron schedule's first `count` ticks strictly after a
   * time; an everyMs schedule passes none (the script computes its ticks).
   */
  async upsert(
    topic: string,
    name: string,
    definition: string,
    cronTicks?: (afterMs: number, count: number) => number[],
  ): Promise<StoredSchedule> {
    const layout = await this.verified(topic, 'upsert a schedule');
    await this.touchIndex('add', topic);
    let after = (await this.serverNow()) - CLOCK_SLACK_MS;
    let reply: number[];
    // A second round only when this clock's estimate was too late; it starts from the server's
    // own time, so it finds the tick (cron ticks are at least a second apart).
    for (;;) {
      const ticks = cronTicks?.(after, CRON_CANDIDATES) ?? [];
      const complete = ticks.length < CRON_CANDIDATES ? 1 : 0;
      reply = await this.scripts.run<number[]>('scheduleUpsert', topic, this.slot(layout), [
        name,
        definition,
        after,
        complete,
        ...ticks,
      ]);
      this.observe(reply[3]);
      if (reply[0] !== -1) break;
      after = reply[1];
    }
    // Bumped again once the schedule is stored, so a scheduler that reloaded in between sees it.
    await this.touchIndex('add', topic);
    return { name, definition, nextRunAt: orNull(reply[1]), lastRunAt: orNull(reply[2]) };
  }

  /** Removes a schedule; given `definition`, only while the schedule still has that text. */
  async remove(topic: string, name: string, definition?: string): Promise<boolean> {
    const layout = await this.verified(topic, 'remove a schedule');
    const args = definition === undefined ? [name] : [name, definition];
    const [removed, left] = await this.scripts.run<number[]>('scheduleRemove', topic, this.slot(layout), args);
    if (left === 0) {
      await this.touchIndex('remove', topic);
      // An upsert may have landed meanwhile: keep the topic indexed then.
      if ((await this.list(topic)).length > 0) await this.touchIndex('add', topic);
    } else if (removed === 1) {
      await this.touchIndex('add', topic);
    }
    return removed === 1;
  }

  async list(topic: string): Promise<StoredSchedule[]> {
    const reply = await this.scripts.run<(string | number)[]>(
      'scheduleList',
      topic,
      this.slot(this.layouts.get(topic)),
      [],
    );
    this.observe(Number(reply[0]));
    const schedules: StoredSchedule[] = [];
    for (let i = 1; i < reply.length; i += 4) {
      const [name, definition, next, last] = reply.slice(i, i + 4);
      schedules.push({
        name: String(name),
        definition: String(definition),
        nextRunAt: orNull(next),
        lastRunAt: orNull(last),
      });
    }
    return schedules.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Runs one tick (see schedule-tick.lua); wakes the consumers of a partitioned topic after a push. */
  async tick(
    topic: string,
    schedule: { name: string; definition: string; expected: number; tick: number; next: number | null },
    body: string,
  ): Promise<TickOutcome> {
    const layout = await this.verified(topic, 'run a schedule');
    const { name, definition, expected, tick, next } = schedule;
    const id = this.tickId(topic, name, tick);
    const args = [name, definition, expected, tick, next ?? -1, id, body];
    const [outcome, now] = await this.scripts.run<number[]>('scheduleTick', topic, this.slot(layout), args);
    this.observe(now);
    if (outcome === 1) await this.scripts.wakeHome(layout);
    return OUTCOMES[outcome];
  }

  /** The topics that have schedules. */
  async topics(): Promise<string[]> {
    const topics = await sendCommand(this.client, 'list scheduled topics', undefined, () =>
      this.client.smembers(this.index.scheduleTopics),
    );
    return topics.sort();
  }

  /** The counter every change bumps: one command, what an idle scheduler sends. */
  async version(): Promise<string> {
    const version = await sendCommand(this.client, 'read the schedule version', undefined, () =>
      this.client.get(this.index.scheduleVersion),
    );
    return version ?? '0';
  }

  private async touchIndex(action: 'add' | 'remove', topic: string): Promise<void> {
    await this.scripts.run('scheduleIndex', topic, this.index, [action, topic]);
  }

  private async verified(topic: string, operation: string): Promise<TopicLayout> {
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, operation);
    return layout;
  }

  /** A topic's schedules live in its first partition's slot (its only one when unpartitioned). */
  private slot(layout: TopicLayout): QueueKeys {
    return layout.partitions[0];
  }

  private observe(serverNow: number): void {
    this.offsetMs = serverNow - Date.now();
  }
}
