import type { FlowNode, MessageInfo } from '../interfaces';

/**
 * What the dashboard sends of values a codec sealed (see docs/codecs.md): without the option
 * `revealSealedPayloads`, their description only (size, key id, why they could not be opened),
 * never the opened payload, headers or result, so an operator sees them only where the serving
 * process has the key and the option says so. A value sent is a value readable in the browser.
 */

/**
 * A message without what a codec sealed: payload and headers (`sealed`), result (`sealedResult`),
 * progress (`sealedProgress`), step results (`sealedSteps`), children's results.
 */
export function redactMessage<T extends MessageInfo>(message: T): T {
  const redacted: T = { ...message };
  if (redacted.sealed) {
    redacted.payload = undefined;
    redacted.headers = {};
  }
  if (redacted.sealedResult) delete redacted.result;
  if (redacted.sealedProgress) delete redacted.progress;
  const { steps, sealedSteps } = redacted;
  if (steps && sealedSteps) {
    const kept: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const name of Object.keys(steps)) kept[name] = name in sealedSteps ? undefined : steps[name];
    redacted.steps = kept;
  }
  if (redacted.children)
    redacted.children = redacted.children.map((child) => {
      if (!child.sealedResult) return child;
      const { result: _sealed, ...described } = child;
      return described;
    });
  return redacted;
}

/** A flow's tree without the results a codec sealed (walked without recursion: a chain may be thousands deep). */
export function redactFlow(root: FlowNode): FlowNode {
  const stack = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.sealedResult) delete node.result;
    stack.push(...node.children);
  }
  return root;
}
