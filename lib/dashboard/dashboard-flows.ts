import type {
  FlowChildInfo,
  FlowNode,
  FlowNodeState,
  MessageInfo,
  MessagePreview,
  SealedValueInfo,
} from '../interfaces';

/** The bytes of a child's result a page shows (its own details, while it lives, show it whole). */
export const RESULT_PREVIEW_BYTES = 200;
/** How many of a parent's children its details list; the rest are counted by outcome. */
export const CHILDREN_SHOWN = 100;

/** A child as a message's details list it: its result cut to a preview. */
export type ChildRow = Omit<FlowChildInfo, 'result'> & { preview?: MessagePreview };

/** How many children a parent has, by outcome. */
export interface ChildCounts {
  total: number;
  pending: number;
  acked: number;
  failed: number;
}

/** One message as its details show it: of a flow's parent, its first children and their counts. */
export type MessageDetail = Omit<MessageInfo, 'children' | 'steps'> & {
  children?: ChildRow[];
  childCounts?: ChildCounts;
  /** Its durable steps as rows, so a step that returned undefined still shows after JSON. */
  steps?: { name: string; value?: unknown }[];
};

/** A node of a flow as the page draws it: a result as a preview, children cut to the budget. */
export interface FlowView {
  topic: string;
  id: string;
  state: FlowNodeState;
  preview?: MessagePreview;
  /** Its result as a codec sealed it: size and key id (the preview, when the option reveals it, is of the opened result). */
  sealed?: SealedValueInfo;
  failure?: { reason: string; error?: string };
  children: FlowView[];
  /** Its children left out (they and their own children are not in the answer). */
  more: number;
}

/** A flow as the page draws it: at most `shown` nodes of `total`, and every node's state counted. */
export interface FlowAnswer {
  total: number;
  shown: number;
  states: Partial<Record<FlowNodeState, number>>;
  root: FlowView;
}

/** A value's JSON text, cut to `bytes` (never inside a character); undefined for no value. */
export function previewOf(value: unknown, bytes: number): MessagePreview | undefined {
  const text = value === undefined ? undefined : JSON.stringify(value);
  if (text === undefined) return undefined;
  const buffer = Buffer.from(text);
  if (buffer.length <= bytes) return { text, truncated: false, bytes: buffer.length };
  // A continuation byte (10xxxxxx) where the cut falls: back up to the start of its character.
  let end = bytes;
  while (end > 0 && (buffer[end] & 0xc0) === 0x80) end--;
  return { text: buffer.subarray(0, end).toString('utf8'), truncated: true, bytes: buffer.length };
}

const FIRST: Record<FlowChildInfo['outcome'], number> = { failed: 0, pending: 1, acked: 2 };

/**
 * A message for its details: a parent's children counted by outcome, the first CHILDREN_SHOWN
 * listed (failed ones first, then pending, then acked, each kind in the order Redis gives), each
 * result cut to a preview, so a parent of 10,000 children answers a page, not 10,000 results.
 */
export function messageDetail(message: MessageInfo): MessageDetail {
  const { children, steps, ...rest } = message;
  const detail: MessageDetail = steps
    ? { ...rest, steps: Object.entries(steps).map(([name, value]) => ({ name, value })) }
    : rest;
  if (!children) return detail;
  const childCounts: ChildCounts = { total: children.length, pending: 0, acked: 0, failed: 0 };
  for (const child of children) childCounts[child.outcome]++;
  const shown = children
    .map((child, at) => ({ child, at }))
    .sort((a, b) => FIRST[a.child.outcome] - FIRST[b.child.outcome] || a.at - b.at)
    .slice(0, CHILDREN_SHOWN)
    .map(({ child: { result, ...row } }): ChildRow => {
      const preview = previewOf(result, RESULT_PREVIEW_BYTES);
      return preview ? { ...row, preview } : row;
    });
  return { ...detail, children: shown, childCounts };
}

/**
 * A flow for the page: every node's state counted, then the nodes level by level (the root, its
 * children, theirs...) until `budget` are in; a node keeps the first of its children that fit and
 * counts the others in `more`. A flow of 10,000 nodes answers `budget` of them.
 */
export function flowAnswer(root: FlowNode, budget: number): FlowAnswer {
  const states: Partial<Record<FlowNodeState, number>> = {};
  let total = 0;
  const view = (node: FlowNode): FlowView => {
    const preview = previewOf(node.result, RESULT_PREVIEW_BYTES);
    return {
      topic: node.topic,
      id: node.id,
      state: node.state,
      ...(preview && { preview }),
      ...(node.sealedResult && { sealed: node.sealedResult }),
      ...(node.failure && { failure: node.failure }),
      children: [],
      more: node.children.length,
    };
  };
  const top = view(root);
  let shown = 1;
  let level: [FlowNode, FlowView][] = [[root, top]];
  while (level.length > 0) {
    const below: [FlowNode, FlowView][] = [];
    for (const [node, parent] of level) {
      total++;
      states[node.state] = (states[node.state] ?? 0) + 1;
      for (const child of node.children) {
        if (shown < budget) {
          const childView = view(child);
          parent.children.push(childView);
          parent.more--;
          shown++;
          below.push([child, childView]);
        } else countAll(child);
      }
    }
    level = below;
  }
  // Without recursion: a flow may be a chain thousands of levels deep.
  function countAll(node: FlowNode): void {
    const stack = [node];
    for (let next = stack.pop(); next; next = stack.pop()) {
      total++;
      states[next.state] = (states[next.state] ?? 0) + 1;
      stack.push(...next.children);
    }
  }
  return { total, shown, states, root: top };
}
