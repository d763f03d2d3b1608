import { PollerLiveness } from '../../lib/consumer/poller-liveness';
import type { ConsumerEngine } from '../../lib/engine/consumer-engine';

describe('PollerLiveness on fake timers', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('counts the time since Redis last answered: a wedged call makes it grow', async () => {
    const liveness = new PollerLiveness('jobs');
    let answer!: (flags: boolean[]) => void;
    const engine = {
      settle: () => new Promise<boolean[]>((resolve) => (answer = resolve)),
    } as unknown as ConsumerEngine;
    const watched = liveness.watch(engine);
    const extended = watched.settle('extend', 'jobs', [], 1_000);
    jest.advanceTimersByTime(20_000);
    expect(liveness.snapshot()).toMatchObject({ topic: 'jobs', msSinceAnswer: 20_000 });
    answer([true]);
    await extended;
    expect(liveness.snapshot().msSinceAnswer).toBe(0);
    liveness.answered();
    liveness.stop();
  });

  it('remembers a long gap between timer ticks (a blocked event loop) for a minute', () => {
    const liveness = new PollerLiveness('jobs');
    jest.advanceTimersByTime(2_000);
    expect(liveness.snapshot().longestTickGapMs).toBe(0);
    // The loop is blocked for 3 s: no timer runs, then the overdue tick sees the gap.
    jest.setSystemTime(Date.now() + 3_000);
    jest.advanceTimersByTime(500);
    expect(liveness.snapshot().longestTickGapMs).toBeGreaterThanOrEqual(2_900);
    jest.advanceTimersByTime(61_000);
    expect(liveness.snapshot().longestTickGapMs).toBe(0);
    liveness.stop();
  });
});
