import { encodePushBody, encodeSealableBody, sealedPushBody, type EncodedPush } from '../engine/codecs/wire-format';
import type { ValueCodecs } from './value-codecs';
import { encodeKeyMode } from './key-modes';
import { encodePushExtras } from './push-extras';
import { InvalidOptionError } from '../errors';
import type { PushManyItem } from '../interfaces';
import {
  assertBounded,
  assertDelay,
  assertGroup,
  assertHeaders,
  assertMessageId,
  assertOptionalBounded,
  toEpochMs,
} from './validation';

/**
 * Checks one push item and encodes it for push.lua; throws a typed error on the first bad field.
 * An item without an id gets '' here: the caller gives it one once every item passed (see MessageIds).
 * `compact`: the prefix's stored format lets a message without headers, group or maxAttempts be compact.
 * `flowRole`: its place in a flow (wire-format's FLOW_CHILD and FLOW_PARENT bits), kept in its body.
 * `sealing`: the topic has a codec: the body waits in `sealable` for sealItems (see ValueCodecs).
 */
export function encodePushItem(
  topic: string,
  item: PushManyItem,
  maxPayloadBytes: number,
  compact: boolean,
  flowRole = 0,
  sealing = false,
): EncodedPush {
  if (typeof item !== 'object' || item === null) {
    throw new InvalidOptionError('item', item, 'an object { payload, ...options }', true);
  }
  const { id = '', delayMs = 0, availableAt, maxAttempts, headers, priority = 0, group } = item;
  const keyed = encodeKeyMode(item);
  if (item.id !== undefined) assertMessageId(id);
  assertDelay('delayMs', delayMs);
  assertOptionalBounded('maxAttempts', maxAttempts);
  if (headers !== undefined) assertHeaders(headers);
  assertBounded('priority', priority);
  if (group !== undefined) assertGroup(group, priority);
  const at = availableAt === undefined ? 0 : toEpochMs('availableAt', availableAt);
  const extras = encodePushExtras(item);
  const sealable = sealing ? encodeSealableBody(topic, item.payload, item, maxPayloadBytes, flowRole) : undefined;
  const body = sealable ? '' : encodePushBody(topic, item.payload, item, maxPayloadBytes, compact, flowRole);
  let encoded: EncodedPush;
  if (keyed) encoded = { id, body, keyed, extras, options: [Math.ceil(delayMs), at, priority, ''] };
  else if (delayMs === 0 && at === 0 && priority === 0 && group === undefined && extras === undefined)
    encoded = { id, body };
  else encoded = { id, body, group, extras, options: [Math.ceil(delayMs), at, priority, group ?? ''] };
  if (sealable) encoded.sealable = sealable;
  return encoded;
}

/**
 * Seals the bodies of items encoded with `sealing` under the topic's codec (see ValueCodecs): at
 * once when the codec answers at once (undefined), else a promise of the last.
 */
export function sealItems(codecs: ValueCodecs, topic: string, items: EncodedPush[]): Promise<void> | undefined {
  let pending: Promise<void>[] | undefined;
  for (const item of items) {
    const { sealable } = item;
    if (!sealable) continue;
    delete item.sealable;
    const sealed = codecs.seal(topic, sealable.json);
    if (typeof sealed === 'string') item.body = sealedPushBody(sealed, sealable.tail);
    else (pending ??= []).push(sealed.then((text) => void (item.body = sealedPushBody(text, sealable.tail))));
  }
  return pending && Promise.all(pending).then(() => undefined);
}
