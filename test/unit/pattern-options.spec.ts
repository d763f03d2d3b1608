import { UnknownPatternOptionError } from '../../lib/errors';
import { patternHandlerOptions } from '../../lib/microservices/pattern-options';

describe("a pattern decorator's extras (patternHandlerOptions)", () => {
  it('keeps the handler options it sets, and leaves out those set to undefined', () => {
    expect(patternHandlerOptions('orders', { maxAttempts: 3, concurrency: undefined, leaseMs: 5_000 })).toEqual({
      maxAttempts: 3,
      leaseMs: 5_000,
    });
    expect(patternHandlerOptions('orders', undefined)).toEqual({});
  });

  it.each([
    ['maxAttempt', 'maxAttempts'],
    ['Concurrency', 'concurrency'],
    ['leaseMS', 'leaseMs'],
    ['ratelimit', 'rateLimit'],
    ['retries', undefined],
  ])('refuses %j, suggesting %j', (option, suggestion) => {
    let failure: unknown;
    try {
      patternHandlerOptions('orders.placed', { [option]: 1 });
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(UnknownPatternOptionError);
    expect(failure).toMatchObject({ code: 'UNKNOWN_PATTERN_OPTION', topic: 'orders.placed', option, suggestion });
    expect((failure as Error).message).toContain(
      suggestion ? `did you mean "${suggestion}"?` : 'the extras may set concurrency, leaseMs',
    );
  });
});
