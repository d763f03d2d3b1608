import { PollerLiveness } from '../../lib/consumer/poller-liveness';

describe('PollerLiveness on fake timers', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('counts the time since Redis last answered: a wedged call makes it grow', () => {
    // The engine notes each script's answer per topic (ScriptRunner): another topic's answers are not this one's.
    const answeredAt = new Map<string, number>();
    const liveness = new PollerLiveness('jobs', { lastAnswerAt: (topic) => answeredAt.get(topic) });
    jest.advanceTimersByTime(20_000);
    answeredAt.set('other', Date.now());
    expect(liveness.snapshot()).toMatchObject({ topic: 'jobs', msSinceAnswer: 20_000 });
    answeredAt.set('jobs', Date.now());
    expect(liveness.snapshot().msSinceAnswer).toBe(0);
    // Its blocking wait's answer counts too.
    jest.advanceTimersByTime(3_000);
    liveness.answered();
    expect(liveness.snapshot().msSinceAnswer).toBe(0);
    liveness.stop();
  });

  it('remembers a long gap between timer ticks (a blocked event loop) for a minute', () => {
    const liveness = new PollerLiveness('jobs', { lastAnswerAt: () => undefined });
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
