import { resolveSchedule } from '../../lib/queue/schedules/schedule-spec';
import { nextTick } from '../../lib/queue/schedules/schedule-times';

describe('schedule ticks stay within the Date range (8.64e15 epoch ms)', () => {
  it('ends an everyMs schedule whose next tick would leave it: no tick left instead of an invalid date', () => {
    const last = resolveSchedule('t', 'n', { everyMs: 1e15, startAt: 8.64e15 - 1 }, 1_000);
    expect(nextTick(last, 0)).toBe(8.64e15 - 1);
    expect(nextTick(last, 8.64e15 - 1)).toBeNull();
  });

  it('bounds everyMs so that, from now, the next tick is within it', () => {
    const longest = resolveSchedule('t', 'n', { everyMs: 1e15 }, 1_000);
    expect(new Date(nextTick(longest, Date.now())!).getTime()).not.toBeNaN();
  });
});
