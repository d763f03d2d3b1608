import { InvalidOptionError } from '../../lib';
import { bulkSelection } from '../../lib/queue/bulk-options';

describe('bulk options', () => {
  it('defaults to the dead letters at 50,000 a second', () => {
    expect(bulkSelection({ action: 'requeue' })).toEqual({ action: 'requeue', state: 'dead', maxPerSecond: 50_000 });
  });

  it('takes the filter as list does, times as epoch ms', () => {
    const from = new Date(1_700_000_000_000);
    expect(
      bulkSelection({
        action: 'cancel',
        filter: { state: 'ready', tag: 'tenant:42', from, to: 1_800_000_000_000, errorContains: 'x' },
        maxPerSecond: 1,
      }),
    ).toEqual({
      action: 'cancel',
      state: 'ready',
      tag: 'tenant:42',
      from: 1_700_000_000_000,
      to: 1_800_000_000_000,
      errorContains: 'x',
      maxPerSecond: 1,
    });
  });

  it.each([
    ['requeue', ['dead']],
    ['purge', ['dead', 'completed']],
    ['replay', ['dead', 'completed']],
    ['cancel', ['ready', 'delayed', 'leased', 'dead', 'completed', 'waiting-children']],
  ] as const)('lets %s select only %j', (action, allowed) => {
    for (const state of ['ready', 'delayed', 'leased', 'dead', 'completed', 'waiting-children'] as const) {
      const select = () => bulkSelection({ action, filter: { state } });
      if ((allowed as readonly string[]).includes(state)) expect(select().state).toBe(state);
      else expect(select).toThrow(InvalidOptionError);
    }
  });

  it('refuses a bad action, pace or filter, never quoting a tag or error text', () => {
    const secret = 'tenant-secret-42';
    const bad: unknown[] = [
      undefined,
      { action: 'drop' },
      { action: 'requeue', maxPerSecond: 0 },
      { action: 'requeue', maxPerSecond: 2_000_000 },
      { action: 'requeue', maxPerSecond: Number.NaN },
      { action: 'requeue', filter: [] },
      { action: 'requeue', filter: { tags: [secret] } },
      { action: 'requeue', filter: { state: 'gone' } },
      { action: 'requeue', filter: { tag: `${secret}\n` } },
      { action: 'requeue', filter: { tag: secret.repeat(10) } },
      { action: 'requeue', filter: { errorContains: secret.repeat(100) } },
      { action: 'requeue', filter: { to: -1 } },
    ];
    for (const options of bad) {
      let caught: unknown;
      try {
        bulkSelection(options as never);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(InvalidOptionError);
      expect((caught as Error).message).not.toContain(secret);
    }
  });
});
