import { Cron } from 'croner';
import { LIMITS } from '../../common/redis-ack-queue.constants';
import type { ScheduleSpec } from './schedule-spec';

/**
 * How late (ms) a scheduler may run a tick and still be counted as running: a pending tick
 * overdue by more than this, with later ticks also due, means every scheduler was down, and
 * only the most recent missed tick runs. Shorter gaps are caught up tick by tick.
 */
export const CATCH_UP_AFTER_MS = 2_000;

function cronOf(spec: ScheduleSpec & { cron: string }): Cron {
  return new Cron(spec.cron, { timezone: spec.tz ?? 'UTC', paused: true });
}

/** The first tick strictly after `afterMs`, within startAt, endAt and the Date range; null when none is left. */
export function nextTick(spec: ScheduleSpec, afterMs: number): number | null {
  const from = Math.max(afterMs + 1, spec.startAt ?? -Infinity);
  let tick: number | null;
  if (spec.everyMs !== undefined) {
    const anchor = spec.startAt ?? 0;
    tick = anchor + Math.ceil((from - anchor) / spec.everyMs) * spec.everyMs;
  } else {
    tick =
      cronOf(spec as ScheduleSpec & { cron: string })
        .nextRun(new Date(from - 1))
        ?.getTime() ?? null;
  }
  return tick !== null && tick <= Math.min(spec.endAt ?? Infinity, LIMITS.maxDateMs) ? tick : null;
}

/** The first `count` ticks strictly after `afterMs` (fewer when no more are left). */
export function ticksAfter(spec: ScheduleSpec, afterMs: number, count: number): number[] {
  const ticks: number[] = [];
  for (let tick = nextTick(spec, afterMs); tick !== null && ticks.length < count; tick = nextTick(spec, tick)) {
    ticks.push(tick);
  }
  return ticks;
}

/** The last tick at or before `atMs` (and endAt), not before startAt; null when there is none. */
export function latestTick(spec: ScheduleSpec, atMs: number): number | null {
  const until = Math.min(atMs, spec.endAt ?? Infinity);
  let tick: number | null;
  if (spec.everyMs !== undefined) {
    const anchor = spec.startAt ?? 0;
    tick = anchor + Math.floor((until - anchor) / spec.everyMs) * spec.everyMs;
  } else {
    tick =
      cronOf(spec as ScheduleSpec & { cron: string })
        .previousRuns(1, new Date(until + 1))[0]
        ?.getTime() ?? null;
  }
  return tick !== null && tick >= (spec.startAt ?? -Infinity) ? tick : null;
}

/**
 * What a scheduler does at `nowMs` with a pending tick: nothing before it is due; else run
 * it, or, when it is overdue by more than CATCH_UP_AFTER_MS and later ticks are due too
 * (every scheduler was down), run only the most recent of them. `next` is the tick after.
 */
export function tickToRun(
  spec: ScheduleSpec,
  pending: number,
  nowMs: number,
): { tick: number; next: number | null } | null {
  if (pending > nowMs) return null;
  let tick = pending;
  if (nowMs - pending > CATCH_UP_AFTER_MS) tick = Math.max(pending, latestTick(spec, nowMs) ?? pending);
  return { tick, next: nextTick(spec, tick) };
}
