import { LIMITS } from '../common/redis-ack-queue.constants';
import type { FlowPlanNode } from '../engine/stores/flow-trees';
import { FLOW_CHILD, FLOW_PARENT } from '../engine/codecs/wire-format';
import { InvalidOptionError } from '../errors';
import type { Flow, PushOptions } from '../interfaces';
import { keyModeOf } from './key-modes';
import { encodePushItem } from './push-items';
import { assertTopic, toEpochMs } from './validation';

const FLOW_KEYS = new Set(['topic', 'payload', 'id', 'options', 'children']);

/**
 * Checks a whole flow and encodes each node for the engine; throws a typed error on the first
 * bad node, before anything is stored. Nodes without an id get '' (the caller gives them one).
 * A node is named in errors by its path (`flow.children[2].children[0]`), never by its data.
 */
export function planFlow(
  flow: Flow,
  maxPayloadBytes: number,
  compact: boolean,
  sealing: (topic: string) => boolean = () => false,
): FlowPlanNode {
  let count = 0;
  const seen = new Set<string>();
  const plan = (node: unknown, path: string, depth: number, isChild: boolean): FlowPlanNode => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      throw new InvalidOptionError(path, node, 'an object { topic, payload, id?, options?, children? }', true);
    }
    const unknown = Object.keys(node).find((key) => !FLOW_KEYS.has(key));
    if (unknown !== undefined) {
      throw new InvalidOptionError(path, node, 'only topic, payload, id, options and children', true);
    }
    if (++count > LIMITS.flowNodes) {
      throw new InvalidOptionError('flow', count, `at most ${LIMITS.flowNodes} nodes`);
    }
    if (depth > LIMITS.flowDepth) {
      throw new InvalidOptionError(path, depth, `a tree at most ${LIMITS.flowDepth} levels deep`);
    }
    const { topic, payload, id, options = {}, children = [] } = node as Flow;
    assertTopic(topic);
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw new InvalidOptionError(`${path}.options`, options, 'an object of push options', true);
    }
    const { onChildFailure = 'fail', ...pushOptions } = options;
    if (onChildFailure !== 'fail' && onChildFailure !== 'continue') {
      throw new InvalidOptionError(`${path}.options.onChildFailure`, onChildFailure, "'fail' or 'continue'");
    }
    if (!isChild && options.onChildFailure !== undefined) {
      throw new InvalidOptionError(
        'flow.options.onChildFailure',
        onChildFailure,
        'nothing on the root (it has no parent)',
      );
    }
    if (!Array.isArray(children)) {
      throw new InvalidOptionError(`${path}.children`, children, 'an array of flows', true);
    }
    const mode = keyModeOf(pushOptions);
    if (mode !== undefined) {
      const given = (pushOptions as PushOptions)[mode];
      throw new InvalidOptionError(
        `${path}.options.${mode}`,
        given,
        'no key mode in a flow (the flow decides when its nodes run)',
        true,
      );
    }
    const role = (isChild ? FLOW_CHILD : 0) | (children.length > 0 ? FLOW_PARENT : 0);
    const item = encodePushItem(topic, { ...pushOptions, id, payload }, maxPayloadBytes, compact, role, sealing(topic));
    if (item.id !== '') {
      const key = `${topic}\n${item.id}`;
      if (seen.has(key)) throw new InvalidOptionError(`${path}.id`, item.id, 'an id used once per topic in the flow');
      seen.add(key);
    }
    const { delayMs = 0, availableAt, priority = 0 } = pushOptions;
    return {
      topic,
      item,
      priority,
      delayMs: Math.ceil(delayMs),
      availableAt: availableAt === undefined ? 0 : toEpochMs('availableAt', availableAt),
      policy: onChildFailure === 'continue' ? 'c' : 'f',
      children: children.map((child, i) => plan(child, `${path}.children[${i}]`, depth + 1, true)),
    };
  };
  return plan(flow, 'flow', 1, false);
}

/** Every node of a planned flow, parents before their children. */
export function flowNodes(root: FlowPlanNode): FlowPlanNode[] {
  const nodes: FlowPlanNode[] = [];
  const visit = (node: FlowPlanNode) => {
    nodes.push(node);
    node.children.forEach(visit);
  };
  visit(root);
  return nodes;
}
