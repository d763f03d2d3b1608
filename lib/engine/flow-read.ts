import type { FlowChildInfo, FlowNode, MessageInfo } from '../interfaces';
import type { MessageLookup } from './message-lookup';

/**
 * A flow's tree from one node down (getFlow): each node's message as `get` reads it, and for a
 * child that left Redis, how its parent recorded its end. Siblings are read at once.
 */
export async function flowNodeOf(lookup: MessageLookup, topic: string, id: string): Promise<FlowNode | null> {
  const info = await lookup.get(topic, id);
  return info && nodeOf(lookup, topic, info);
}

async function nodeOf(lookup: MessageLookup, topic: string, info: MessageInfo): Promise<FlowNode> {
  const children = await Promise.all((info.children ?? []).map((child) => childNodeOf(lookup, child)));
  return {
    topic,
    id: info.id,
    state: info.state,
    ...(info.state === 'completed' && info.result !== undefined && { result: info.result }),
    children,
  };
}

async function childNodeOf(lookup: MessageLookup, child: FlowChildInfo): Promise<FlowNode> {
  const info = await lookup.get(child.topic, child.id);
  const node: FlowNode = info
    ? await nodeOf(lookup, child.topic, info)
    : // Gone: acked (or ended, its parent not told yet), or cancelled.
      {
        topic: child.topic,
        id: child.id,
        state:
          child.outcome === 'failed' ? (child.failure?.reason === 'cancelled' ? 'cancelled' : 'dead') : 'completed',
        children: [],
      };
  if (child.outcome === 'acked' && child.result !== undefined) node.result = child.result;
  if (child.outcome === 'failed' && child.failure) node.failure = child.failure;
  return node;
}
