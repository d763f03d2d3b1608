import { describeSealed, isSealed } from '../codecs/sealed-text';
import { SealedValue } from '../engine/codecs/sealed-value';
import { PayloadDecodeError } from '../errors';
import type { DeadLetter, FlowChildInfo, FlowNode, MessageInfo, SealedValueInfo } from '../interfaces';
import { openedBody, parseOpened } from './sealed-messages';
import type { ValueCodecs } from './value-codecs';

/**
 * Lookups of values a codec sealed (see docs/codecs.md): the engine hands them up unopened
 * (SealedValue); here each is opened with its topic's codec when this process has it, and
 * described (size, key id) either way. A value that cannot be opened here is left undefined and
 * says why: a lookup never fails on it, so counts, listings and dead letters stay readable to an
 * operator without the key.
 */

/** A sealed value opened, or why not: `value` is what `parse` made of the JSON it holds. */
interface Opened<V> {
  info: SealedValueInfo;
  value?: V;
}

async function openSealed<V = unknown>(
  codecs: ValueCodecs,
  topic: string,
  sealed: SealedValue,
  parse: (topic: string, json: string) => V = parseOpened as (topic: string, json: string) => V,
): Promise<Opened<V>> {
  const info: SealedValueInfo = describeSealed(sealed.text);
  try {
    return { info, value: parse(topic, await codecs.open(topic, sealed.text)) };
  } catch (error) {
    // A codec that failed, or one of the user's own that answered something other than JSON ('corrupt').
    if (error instanceof PayloadDecodeError) return { info: { ...info, undecodable: error.reason } };
    throw error;
  }
}

/** Payload and headers from a sealed body's `e` (`{"p":...,"h":{...}}`); undefined and `{}` when it cannot be opened. */
async function openBody(
  codecs: ValueCodecs,
  topic: string,
  sealed: SealedValue,
): Promise<{ payload: unknown; headers: Record<string, string>; sealed: SealedValueInfo }> {
  const { info, value } = await openSealed(codecs, topic, sealed, openedBody);
  return value ? { ...value, sealed: info } : { payload: undefined, headers: {}, sealed: info };
}

/** A result handed up sealed, opened (or described) in place: `result` and `sealedResult`. */
async function openResult(
  codecs: ValueCodecs,
  topic: string,
  holder: { result?: unknown; sealedResult?: SealedValueInfo },
): Promise<void> {
  if (!(holder.result instanceof SealedValue)) return;
  const { info, value } = await openSealed(codecs, topic, holder.result);
  holder.sealedResult = info;
  if (info.undecodable) delete holder.result;
  else holder.result = value;
}

/** A message as `get` and `list` show it, its sealed payload, headers, result and children's results opened in place. */
export async function openInfo<T>(codecs: ValueCodecs, topic: string, info: MessageInfo<T>): Promise<MessageInfo<T>> {
  if (info.payload instanceof SealedValue) {
    const { payload, headers, sealed } = await openBody(codecs, topic, info.payload);
    info.payload = payload as T | undefined;
    info.headers = headers;
    info.sealed = sealed;
  }
  await openResult(codecs, topic, info);
  const { preview } = info;
  // prelude-preview.lua hands up a sealed value's head and size: a cut of it could not be opened.
  if (preview && isSealed(preview.text)) {
    const { keyId } = describeSealed(preview.text);
    const described: SealedValueInfo = { bytes: preview.bytes, ...(keyId !== undefined && { keyId }) };
    delete info.preview;
    if (info.state === 'completed') info.sealedResult = described;
    else info.sealed = described;
  }
  if (info.children) await openChildResults(codecs, info.children);
  return info;
}

/** Rows of `list`, each opened as {@link openInfo} opens one. */
export function openInfos<T>(codecs: ValueCodecs, topic: string, infos: MessageInfo<T>[]): Promise<MessageInfo<T>[]> {
  return Promise.all(infos.map((info) => openInfo(codecs, topic, info)));
}

/** A page of dead letters, their sealed payloads and headers opened in place (or described). */
export async function openDeadLetters<T>(codecs: ValueCodecs, letters: DeadLetter<T>[]): Promise<DeadLetter<T>[]> {
  await Promise.all(
    letters.map(async (letter) => {
      if (!(letter.payload instanceof SealedValue)) return;
      const { payload, headers, sealed } = await openBody(codecs, letter.topic, letter.payload);
      letter.payload = payload as T | undefined;
      letter.headers = headers;
      letter.sealed = sealed;
    }),
  );
  return letters;
}

/** A parent's children, each sealed result opened with its own topic's codec. */
function openChildResults(codecs: ValueCodecs, children: FlowChildInfo[]): Promise<unknown> {
  return Promise.all(children.map((child) => openResult(codecs, child.topic, child)));
}

/** A flow's tree (`getFlow`), each node's sealed result opened; walked without recursion (a chain may be thousands deep). */
export async function openFlow(codecs: ValueCodecs, root: FlowNode | null): Promise<FlowNode | null> {
  const nodes: FlowNode[] = [];
  for (let stack = root ? [root] : []; stack.length > 0;) {
    const node = stack.pop()!;
    if (node.result instanceof SealedValue) nodes.push(node);
    stack.push(...node.children);
  }
  await Promise.all(nodes.map((node) => openResult(codecs, node.topic, node)));
  return root;
}

/**
 * Opens, in place, what a running handler stored sealed: its progress value and its durable steps'
 * results, described in `sealedProgress` and `sealedSteps`. One this process cannot open is left
 * out (progress) or undefined (a step's result), as a sealed payload is.
 */
export async function openJobValues(codecs: ValueCodecs, topic: string, info: MessageInfo<unknown>): Promise<void> {
  if (info.progress instanceof SealedValue) {
    const { info: described, value } = await openSealed(codecs, topic, info.progress);
    info.sealedProgress = described;
    if (described.undecodable) delete info.progress;
    else info.progress = value;
  }
  const { steps } = info;
  if (!steps || !Object.values(steps).some((value) => value instanceof SealedValue)) return;
  const sealedSteps: Record<string, SealedValueInfo> = Object.create(null) as Record<string, SealedValueInfo>;
  for (const [name, stored] of Object.entries(steps)) {
    if (!(stored instanceof SealedValue)) continue;
    const { info: described, value } = await openSealed(codecs, topic, stored);
    sealedSteps[name] = described;
    steps[name] = value;
  }
  info.sealedSteps = sealedSteps;
}
