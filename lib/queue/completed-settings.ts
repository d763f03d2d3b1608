import type { CompletedPolicy } from '../engine/consumer-engine';
import { InvalidOptionError } from '../errors';
import type { KeepCompletedOptions, RedisAckQueueOptions } from '../interfaces';
import { DEFAULTS } from '../common/redis-ack-queue.constants';
import { assertOptionalBounded } from './validation';

type KeepOption = boolean | KeepCompletedOptions | undefined;

/**
 * Resolves `keepCompleted` (the service's, and each topic's own in `topics`) into one lookup:
 * a topic's policy, or undefined where acked messages are deleted (the default).
 * @throws {InvalidOptionError} when an option has a bad value.
 */
export function resolveKeepCompleted(
  options: RedisAckQueueOptions,
  maxResultBytes: number,
): (topic: string) => CompletedPolicy | undefined {
  const fallback = policyOf(options.keepCompleted, 'keepCompleted', maxResultBytes);
  const own = new Map<string, CompletedPolicy | undefined>();
  const { topics } = options;
  if (typeof topics === 'object' && topics !== null) {
    for (const [topic, layout] of Object.entries(topics)) {
      const keep = (layout as { keepCompleted?: KeepOption } | null)?.keepCompleted;
      if (keep !== undefined) own.set(topic, policyOf(keep, `topics.${topic}.keepCompleted`, maxResultBytes));
    }
  }
  if (own.size === 0) return () => fallback;
  return (topic) => (own.has(topic) ? own.get(topic) : fallback);
}

function policyOf(option: KeepOption, label: string, maxResultBytes: number): CompletedPolicy | undefined {
  if (option === undefined || option === false) return undefined;
  const valid = option === true || (typeof option === 'object' && option !== null && !Array.isArray(option));
  if (!valid) throw new InvalidOptionError(label, option, 'true, false or { maxCount?, maxAgeMs? }');
  const { maxCount, maxAgeMs } = option === true ? {} : option;
  assertOptionalBounded('completedMaxCount', maxCount, `${label}.maxCount`);
  assertOptionalBounded('completedMaxAgeMs', maxAgeMs, `${label}.maxAgeMs`);
  return {
    maxCount: maxCount ?? DEFAULTS.keepCompleted.maxCount,
    maxAgeMs: maxAgeMs ?? DEFAULTS.keepCompleted.maxAgeMs,
    maxResultBytes,
  };
}
