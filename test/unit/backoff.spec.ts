import { InvalidOptionError } from '../../lib';
import { assertBackoff, resolveBackoff } from '../../lib/queue/backoff';

describe('backoff', () => {
  it('grows exponentially, capped, with jitter taking at most its share off', () => {
    const backoff = resolveBackoff({ type: 'exponential', delayMs: 100, maxDelayMs: 1_000, jitter: 0.5 });
    for (let i = 0; i < 200; i++) {
      expect(backoff(1, null)).toBeGreaterThanOrEqual(50);
      expect(backoff(1, null)).toBeLessThanOrEqual(100);
      expect(backoff(3, null)).toBeGreaterThanOrEqual(200);
      expect(backoff(3, null)).toBeLessThanOrEqual(400);
      expect(backoff(30, null)).toBeLessThanOrEqual(1_000);
      expect(backoff(30, null)).toBeGreaterThanOrEqual(500);
    }
  });

  it('is exact without jitter and fixed when asked', () => {
    expect(resolveBackoff({ type: 'exponential', delayMs: 10, jitter: 0 })(4, null)).toBe(80);
    expect(resolveBackoff({ type: 'fixed', delayMs: 7 })(9, null)).toBe(7);
  });

  it('calls a function with the attempt and error, and clamps what it returns', () => {
    const error = new Error('x');
    const fn = jest.fn((attempt: number) => (attempt === 1 ? -5 : attempt === 2 ? NaN : 12.4));
    const backoff = resolveBackoff(fn);
    expect([backoff(1, error), backoff(2, error), backoff(3, error)]).toEqual([0, 0, 12]);
    expect(fn).toHaveBeenCalledWith(1, error);
  });

  it.each([
    null,
    {},
    { type: 'linear', delayMs: 1 },
    { type: 'fixed', delayMs: -1 },
    { type: 'exponential', delayMs: 1, jitter: 2 },
  ])('refuses %p', (option) => {
    expect(() => assertBackoff(option)).toThrow(InvalidOptionError);
  });
});
