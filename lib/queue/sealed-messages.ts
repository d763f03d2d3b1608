import { PayloadDecodeError } from '../errors';
import type { ReservedMessage } from '../interfaces';
import type { ValueCodecs } from './value-codecs';
import type { FlowChildRecord } from '../engine/codecs/flow-format';
import { SealedValue } from '../engine/codecs/sealed-value';

/**
 * Opens a leased message whose payload and headers a codec sealed (see docs/codecs.md), in place,
 * before its handler runs: at once when its codec answers at once (undefined), else a promise; a
 * PayloadDecodeError, thrown or rejected, when it cannot be (no codec here, a key this process
 * lacks, a value changed in Redis).
 */
export function openMessage(codecs: ValueCodecs, message: ReservedMessage<unknown>): Promise<void> | undefined {
  const { sealed, topic } = message;
  if (sealed === undefined) return;
  const json = codecs.open(topic, sealed);
  // A codec that answers at once costs no promise per message.
  if (typeof json === 'string') return void applyBody(message, json);
  return json.then((text) => applyBody(message, text));
}

/** Puts an opened body's payload and headers on its message. */
function applyBody(message: ReservedMessage<unknown>, json: string): void {
  const { payload, headers } = openedBody(message.topic, json);
  message.payload = payload;
  message.headers = headers;
  delete message.sealed;
}

/**
 * The payload and headers of a body's opened `e` (`{"p":...,"h":{...}}`); a PayloadDecodeError
 * (`corrupt`) when a codec of your own answered something else.
 */
export function openedBody(topic: string, json: string): { payload: unknown; headers: Record<string, string> } {
  const body = parseOpened(topic, json) as { p?: unknown; h?: Record<string, string> } | null;
  if (typeof body !== 'object' || body === null || !('p' in body)) throw new PayloadDecodeError(topic, 'corrupt');
  return { payload: body.p, headers: body.h ?? {} };
}

/** A flow parent's children with each result a codec sealed opened (with the child's topic's codec). */
export async function openChildren(
  codecs: ValueCodecs,
  topic: string,
  children: FlowChildRecord[],
): Promise<FlowChildRecord[]> {
  if (!children.some(({ result }) => result instanceof SealedValue)) return children;
  return Promise.all(
    children.map(async (child) => {
      if (!(child.result instanceof SealedValue)) return child;
      return { ...child, result: parseOpened(child.topic, await codecs.open(child.topic, child.result.text)) };
    }),
  );
}

/** An opened value's JSON; a PayloadDecodeError when a codec of your own answered something else. */
export function parseOpened(topic: string, json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw new PayloadDecodeError(topic, 'corrupt');
  }
}
