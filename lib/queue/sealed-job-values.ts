import { SealedValue } from '../engine/codecs/sealed-value';
import { PayloadDecodeError } from '../errors';
import type { MessageInfo } from '../interfaces';
import { parseOpened } from './sealed-messages';
import type { ValueCodecs } from './value-codecs';

/**
 * Opens, in place, what a running handler stored sealed by its topic's codec (see ValueCodecs):
 * its progress value and its durable steps' results, which the engine hands up as SealedValues.
 * One this process cannot open (no codec here, a key it lacks) is left undefined, as a lookup's
 * sealed payload is: a lookup never fails on it.
 */
export async function openJobValues(codecs: ValueCodecs, topic: string, info: MessageInfo<unknown>): Promise<void> {
  const open = async (value: unknown): Promise<unknown> => {
    if (!(value instanceof SealedValue)) return value;
    try {
      return parseOpened(topic, await codecs.open(topic, value.text));
    } catch (error) {
      if (error instanceof PayloadDecodeError) return undefined;
      throw error;
    }
  };
  if (info.progress instanceof SealedValue) {
    info.progress = await open(info.progress);
    if (info.progress === undefined) delete info.progress;
  }
  const { steps } = info;
  if (!steps || !Object.values(steps).some((value) => value instanceof SealedValue)) return;
  for (const [name, value] of Object.entries(steps)) steps[name] = await open(value);
}
