import type { ChildFailure, FlowChildInfo, FlowNode, MessageInfo } from '../../interfaces';
import type { MessageLookup } from './message-lookup';

/** Messages a flow's read looks up at once: one page, bounded on its own. */
export const FLOW_PAGE_NODES = 500;

/** Runs one page of a read: the caller bounds it (one commandTimeoutMs per page, not per tree). */
export type FlowPageRunner = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * A flow's tree from one node down (getFlow): each node's message as `get` reads it, and for a
 * child that left Redis, how its parent recorded its end. Read level by level, FLOW_PAGE_NODES
 * messages a page, each page through `page`: a flow of 10,000 nodes is some twenty bounded reads,
 * and a chain thousands of levels deep needs no recursion.
 */
export async function flowNodeOf(
  lookup: MessageLookup,
  topic: string,
  id: string,
  page: FlowPageRunner,
): Promise<FlowNode | null> {
  const info = await page(() => lookup.get(topic, id));
  if (!info) return null;
  const root = nodeOf(topic, info);
  let level: { node: FlowNode; children: FlowChildInfo[] }[] = [{ node: root, children: info.children ?? [] }];
  while (level.length > 0) {
    const below: typeof level = [];
    const edges = level.flatMap(({ node, children }) => children.map((child) => ({ node, child })));
    for (let i = 0; i < edges.length; i += FLOW_PAGE_NODES) {
      const slice = edges.slice(i, i + FLOW_PAGE_NODES);
      const infos = await page(() => Promise.all(slice.map(({ child }) => lookup.get(child.topic, child.id))));
      slice.forEach(({ node, child }, k) => {
        const found = infos[k];
        const childNode = found ? nodeOf(child.topic, found) : goneNode(child);
        if (child.outcome === 'acked' && child.result !== undefined) childNode.result = child.result;
        if (child.outcome === 'failed' && child.failure) childNode.failure = child.failure;
        node.children.push(childNode);
        if (found?.children?.length) below.push({ node: childNode, children: found.children });
      });
    }
    level = below;
  }
  return root;
}

/** A node as its message reads; its children are added by the next level's page. */
function nodeOf(topic: string, info: MessageInfo): FlowNode {
  return {
    topic,
    id: info.id,
    state: info.state,
    ...(info.state === 'completed' && info.result !== undefined && { result: info.result }),
    children: [],
  };
}

/**
 * Whether a failed child left nothing behind: cancelled, or dropped at its start-by deadline
 * (`onExpire: 'drop'`: reason `expired` without the error text a dead letter keeps).
 */
function droppedFailure(failure: ChildFailure | undefined): boolean {
  return failure?.reason === 'cancelled' || (failure?.reason === 'expired' && failure.error === undefined);
}

/** A child that left Redis: acked (or ended, its parent not told yet), or cancelled. */
function goneNode(child: FlowChildInfo): FlowNode {
  const failed = child.outcome === 'failed';
  return {
    topic: child.topic,
    id: child.id,
    state: failed ? (droppedFailure(child.failure) ? 'cancelled' : 'dead') : 'completed',
    children: [],
  };
}
