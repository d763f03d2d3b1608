import { flowNodeOf } from '../engine/stores/flow-read';
import type { FlowPlanNode } from '../engine/stores/flow-trees';
import type { Flow, FlowNode, FlowResult } from '../interfaces';
import { flowNodes, planFlow } from './flow-plan';
import { sealItems } from './push-items';
import { openFlow } from './sealed-lookups';
import type { QueueCore } from './queue-core';
import type { QueueProducer } from './queue-producer';
import { assertMessageId, assertReceipts, assertTopic } from './validation';

/** Flows (see RedisAckQueueFlowApi): a part of RedisAckQueueService. */
export class QueueFlows {
  constructor(
    private readonly core: QueueCore,
    private readonly producer: QueueProducer,
  ) {}

  async pushFlow<T>(flow: Flow<T>): Promise<FlowResult> {
    const { result } = await this.storeFlow(flow, undefined);
    return result as FlowResult;
  }

  /**
   * pushFlow for the outbox relay: the root's push carries `receipt` (see QueueProducer.pushRelayed),
   * the flow's commit. 'relayed-before' when it is held already: nothing of the flow is stored
   * (the receipt is read first; a second relay racing with this one loses at the root's push,
   * its nodes never committed). `partition` is the root's, where the receipt is.
   */
  async pushFlowRelayed(
    flow: Flow,
    receipt: string,
  ): Promise<{ result: FlowResult | 'relayed-before'; partition: number }> {
    assertReceipts([receipt], 1);
    return this.storeFlow(flow, receipt);
  }

  private async storeFlow<T>(
    flow: Flow<T>,
    receipt: string | undefined,
  ): Promise<{ result: FlowResult | 'relayed-before'; partition: number }> {
    const { engine, settings, events } = this.core;
    const topic = typeof flow === 'object' && flow !== null ? flow.topic : undefined;
    const { root, flags } = await this.core.call(
      'push a flow',
      typeof topic === 'string' ? topic : undefined,
      async () => {
        const { codecs } = this.core;
        const root = planFlow(flow, settings.maxPayloadBytes, engine.format.compact, (name) => !!codecs.writer(name));
        const nodes = flowNodes(root);
        for (const { topic: name, item } of nodes) {
          const sealed = sealItems(codecs, name, [item]);
          if (sealed) await sealed;
        }
        await this.producer.assignIds(nodes.map(({ item }) => item));
        if (receipt !== undefined) root.item.receipt = receipt;
        // Each topic's first push from this service registers it first (see TopicRegistry).
        for (const name of new Set(nodes.map((node) => node.topic))) await engine.topics.note(name);
        return { root, flags: await engine.flows.store(root) };
      },
      settings.replicatedPushes?.timeoutMs,
    );
    const result = (node: FlowPlanNode): FlowResult => {
      const stored = flags !== 'relayed-before' && flags.get(node) === true;
      if (stored) {
        events.emit({ type: 'pushed', topic: node.topic, id: node.item.id });
        events.tally.pushed(node.topic, 1);
      }
      return { topic: node.topic, id: node.item.id, duplicate: !stored, children: node.children.map(result) };
    };
    const partition = engine.partitionOfPush(root.topic, root.item);
    return { result: flags === 'relayed-before' ? flags : result(root), partition };
  }

  /**
   * Read in pages (see flowNodeOf), each bounded by commandTimeoutMs on its own: a big flow's
   * read takes as long as its pages need, and fails only when one page gets no answer in time.
   */
  async getFlow(topic: string, id: string): Promise<FlowNode | null> {
    this.core.assertOpen('read a flow');
    assertTopic(topic);
    assertMessageId(id);
    const root = await flowNodeOf(this.core.engine.lookup, topic, id, (work) =>
      this.core.call('read a flow', topic, work),
    );
    return openFlow(this.core.codecs, root);
  }
}
