import { SealedValue } from '../engine/codecs/sealed-value';
import type { MessageInfo } from '../interfaces';
import { parseOpened } from './sealed-messages';
import type { ValueCodecs } from './value-codecs';

/**
 * Opens, in place, what a running handler stored sealed by its topic's codec (see ValueCodecs):
 * its progress value and its durable steps' results, which the engine hands up as SealedValues.
 * @throws {PayloadDecodeError} when one cannot be opened (no codec here, a key this process lacks).
 */
export async function openJobValues(codecs: ValueCodecs, topic: string, info: MessageInfo<unknown>): Promise<void> {
  const open = async (value: unknown) =>
    value instanceof SealedValue ? parseOpened(topic, await codecs.open(topic, value.text)) : value;
  if (info.progress instanceof SealedValue) info.progress = await open(info.progress);
  const { steps } = info;
  if (!steps || !Object.values(steps).some((value) => value instanceof SealedValue)) return;
  for (const [name, value] of Object.entries(steps)) steps[name] = await open(value);
}
