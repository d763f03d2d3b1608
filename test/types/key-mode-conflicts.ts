/**
 * Key-mode options that conflict fail to compile (the run time refuses them too, for callers
 * that are not type-checked). Each `// @ts-expect-error` line must stay an error
 * (test/unit/types.spec.ts).
 */
import type { PushOptions, RedisAckQueueService } from '../../lib';

export async function keyModeConflicts(queue: RedisAckQueueService): Promise<void> {
  const debounce = { key: 'k', delayMs: 1_000 };
  const throttle = { key: 'k', windowMs: 1_000 };
  const supersede = { key: 'k', running: 'keep' } as const;

  // What each mode takes.
  await queue.push('t', 1, { debounce, priority: 3, headers: { a: 'b' }, maxAttempts: 2 });
  await queue.push('t', 1, { throttle, delayMs: 10, availableAt: Date.now(), priority: 1 });
  await queue.push('t', 1, { supersede, delayMs: 10 });
  await queue.push('t', 1, { id: 'x', group: 'g', delayMs: 5 });
  await queue.pushMany('t', [{ payload: 1, debounce }, { payload: 2 }]);
  const options: PushOptions = { throttle };
  await queue.push('t', 1, options);

  // @ts-expect-error two key modes
  await queue.push('t', 1, { debounce, throttle });
  // @ts-expect-error two key modes
  await queue.push('t', 1, { throttle, supersede });
  // @ts-expect-error a key mode with an id
  await queue.push('t', 1, { id: 'x', supersede });
  // @ts-expect-error a key mode with an id
  await queue.push('t', 1, { id: 'x', debounce });
  // @ts-expect-error throttle with a group
  await queue.push('t', 1, { group: 'g', throttle });
  // @ts-expect-error supersede with a group
  await queue.push('t', 1, { group: 'g', supersede });
  // @ts-expect-error debounce with a group
  await queue.push('t', 1, { group: 'g', debounce });
  // @ts-expect-error debounce with delayMs (its own delayMs says when)
  await queue.push('t', 1, { delayMs: 5, debounce });
  // @ts-expect-error debounce with availableAt
  await queue.push('t', 1, { availableAt: Date.now(), debounce });
  // @ts-expect-error the same in pushMany
  await queue.pushMany('t', [{ payload: 1, debounce, throttle }]);
  // @ts-expect-error and in a value typed as PushOptions
  const conflicting: PushOptions = { id: 'x', throttle };
  void conflicting;
}
