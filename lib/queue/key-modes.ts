import type { KeyedPush } from '../engine/codecs/wire-format';
import { InvalidOptionError } from '../errors';
import type { PushOptions } from '../interfaces';
import { LIMITS } from '../common/redis-ack-queue.constants';
import { assertDelay, isPlainObject, isWellFormed } from './validation';

/** The push options that give a message a key mode; at most one per push. */
export const KEY_MODES = ['debounce', 'throttle', 'supersede'] as const;

/** The key mode a push names, or undefined; refuses two at once. */
export function keyModeOf(options: PushOptions): (typeof KEY_MODES)[number] | undefined {
  // Most pushes name none: no array for them (push's hot path).
  if (options.debounce === undefined && options.throttle === undefined && options.supersede === undefined) return;
  const named = KEY_MODES.filter((mode) => options[mode] !== undefined);
  if (named.length > 1) {
    throw new InvalidOptionError(
      named[1],
      options[named[1]],
      `one key mode per push, not both ${named.join(' and ')}`,
      true,
    );
  }
  return named[0];
}

/**
 * Checks a push's key mode and what it is pushed with, and encodes it for push-keyed.lua;
 * undefined when the push names none. A mode chooses which message its key's pushes land in:
 * so no `id`; and it orders the key's messages itself: so no `group` (whose order is the push
 * order). Debounce sets the due time: so no `delayMs` or `availableAt` beside it.
 */
export function encodeKeyMode(options: PushOptions): KeyedPush | undefined {
  const mode = keyModeOf(options);
  if (mode === undefined) return undefined;
  const spec: unknown = options[mode];
  if (!isPlainObject(spec)) throw new InvalidOptionError(mode, spec, `an object { key, ... }`, true);
  if (options.id !== undefined)
    throw new InvalidOptionError('id', options.id, `no id with ${mode}: its key chooses the message`);
  if (options.group !== undefined) {
    throw new InvalidOptionError(
      'group',
      options.group,
      `no group with ${mode}: a key orders its messages itself`,
      true,
    );
  }
  const key = spec.key;
  const keyValid = typeof key === 'string' && key.length > 0 && key.length <= LIMITS.idLength;
  if (!keyValid || key.includes('\0') || !isWellFormed(key)) {
    throw new InvalidOptionError(
      `${mode}.key`,
      key,
      'a string of 1 to 256 characters without NUL or unpaired surrogates',
      true,
    );
  }
  if (mode === 'debounce') {
    for (const option of ['delayMs', 'availableAt'] as const)
      if (options[option] !== undefined)
        throw new InvalidOptionError(
          option,
          options[option],
          `no ${option} with debounce (its delayMs sets the due time)`,
        );
    assertDelay('debounce.delayMs', spec.delayMs);
    if (spec.maxWaitMs !== undefined) assertDelay('debounce.maxWaitMs', spec.maxWaitMs);
    const maxWait = spec.maxWaitMs === undefined ? '' : Math.ceil(spec.maxWaitMs);
    return { mode: 'd', key, delayMs: Math.ceil(spec.delayMs), extra: maxWait };
  }
  if (mode === 'throttle') {
    const windowMs = spec.windowMs;
    if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs < 1) {
      throw new InvalidOptionError('throttle.windowMs', windowMs, 'a finite number of milliseconds >= 1');
    }
    assertDelay('throttle.windowMs', windowMs);
    return { mode: 't', key, extra: Math.ceil(windowMs) };
  }
  if (spec.running !== 'cancel' && spec.running !== 'keep') {
    throw new InvalidOptionError('supersede.running', spec.running, "'cancel' or 'keep'");
  }
  return { mode: spec.running === 'cancel' ? 'c' : 'k', key };
}
