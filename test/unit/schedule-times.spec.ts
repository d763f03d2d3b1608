import { resolveSchedule, type ScheduleSpec } from '../../lib/queue/schedules/schedule-spec';
import { CATCH_UP_AFTER_MS, latestTick, nextTick, tickToRun } from '../../lib/queue/schedules/schedule-times';

const at = (iso: string) => Date.parse(iso);
const spec = (options: object): ScheduleSpec => resolveSchedule('t', 'n', options, 1_000_000);

describe('schedule ticks (computed by croner, from a fixed "now")', () => {
  it('reads a cron expression in its time zone, across daylight saving time', () => {
    const nineInNewYork = spec({ cron: '0 9 * * *', tz: 'America/New_York' });
    // 09:00 EST is 14:00 UTC; from 10 March 2024 on (EDT) it is 13:00 UTC.
    expect(nextTick(nineInNewYork, at('2024-03-09T00:00:00Z'))).toBe(at('2024-03-09T14:00:00Z'));
    expect(nextTick(nineInNewYork, at('2024-03-09T14:00:00Z'))).toBe(at('2024-03-10T13:00:00Z'));
    // 02:30 does not exist in Berlin on 31 March 2024 (clocks go 02:00 -> 03:00): croner runs it at 03:00 CEST.
    const halfPastTwoInBerlin = spec({ cron: '30 2 * * *', tz: 'Europe/Berlin' });
    expect(nextTick(halfPastTwoInBerlin, at('2024-03-30T12:00:00Z'))).toBe(at('2024-03-31T01:00:00Z'));
    // 02:30 happens twice on 27 October 2024: one tick, not two.
    const first = nextTick(halfPastTwoInBerlin, at('2024-10-26T12:00:00Z'))!;
    expect(first).toBe(at('2024-10-27T00:30:00Z'));
    expect(nextTick(halfPastTwoInBerlin, first)).toBe(at('2024-10-28T01:30:00Z'));
  });

  it('reads cron in UTC when no time zone is given, whatever the process time zone', () => {
    expect(nextTick(spec({ cron: '0 2 * * *' }), at('2024-06-01T03:00:00Z'))).toBe(at('2024-06-02T02:00:00Z'));
  });

  it('aligns everyMs to its multiples since the epoch, or since startAt', () => {
    expect(nextTick(spec({ everyMs: 60_000 }), at('2024-06-01T10:00:30Z'))).toBe(at('2024-06-01T10:01:00Z'));
    expect(nextTick(spec({ everyMs: 60_000 }), at('2024-06-01T10:01:00Z'))).toBe(at('2024-06-01T10:02:00Z'));
    const startAt = at('2024-06-01T10:00:07Z');
    expect(nextTick(spec({ everyMs: 60_000, startAt }), at('2024-06-01T09:00:00Z'))).toBe(startAt);
    expect(nextTick(spec({ everyMs: 60_000, startAt }), startAt)).toBe(startAt + 60_000);
  });

  it('bounds ticks by startAt and endAt', () => {
    const bounded = spec({
      cron: '0 * * * *',
      startAt: at('2024-06-01T10:30:00Z'),
      endAt: at('2024-06-01T12:00:00Z'),
    });
    expect(nextTick(bounded, at('2024-06-01T00:00:00Z'))).toBe(at('2024-06-01T11:00:00Z'));
    expect(nextTick(bounded, at('2024-06-01T11:00:00Z'))).toBe(at('2024-06-01T12:00:00Z'));
    expect(nextTick(bounded, at('2024-06-01T12:00:00Z'))).toBeNull();
    expect(latestTick(bounded, at('2024-06-02T00:00:00Z'))).toBe(at('2024-06-01T12:00:00Z'));
    expect(latestTick(bounded, at('2024-06-01T10:45:00Z'))).toBeNull();
  });

  it('runs a pending tick when due; after a long gap only the most recent missed one', () => {
    const everySecond = spec({ everyMs: 1_000 });
    expect(tickToRun(everySecond, 10_000, 9_999)).toBeNull();
    expect(tickToRun(everySecond, 10_000, 10_000)).toEqual({ tick: 10_000, next: 11_000 });
    // Late by less than the bound: caught up tick by tick.
    expect(tickToRun(everySecond, 10_000, 10_000 + CATCH_UP_AFTER_MS)).toEqual({ tick: 10_000, next: 11_000 });
    // Every scheduler was down: one run, for the most recent tick, then the next one after now.
    expect(tickToRun(everySecond, 10_000, 60_500)).toEqual({ tick: 60_000, next: 61_000 });
    const hourly = spec({ cron: '0 * * * *' });
    expect(tickToRun(hourly, at('2024-06-01T10:00:00Z'), at('2024-06-01T15:20:00Z'))).toEqual({
      tick: at('2024-06-01T15:00:00Z'),
      next: at('2024-06-01T16:00:00Z'),
    });
  });
});
