import { sendCommand } from '../redis/redis-command';
import { childField, linkOf, type FlowChildRecord, type FlowLink } from '../codecs/flow-format';
import type { FlowTrees } from './flow-trees';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';

/** The operation a failed read of a requeue names. */
const REQUEUE = 'requeue dead letters';

/** A failed child below a dead parent that can never end well (cancelled, or its dead letter deleted). */
export interface GoneChild {
  parent: FlowLink;
  child: FlowLink;
}

/** How a failed child of a parent stands, read in its own slot. */
type ChildStanding = 'gone' | 'dead-parent' | 'there';

/**
 * Requeueing a flow's parent that went to the dead letters as child-failed, so that it still runs
 * only after its children: its failed children are requeued from their dead letters first (a child
 * that is such a parent itself, the same way, down the tree), then it leaves the dead letters to
 * wait for them (flow-resume.lua). A process that stops between the two leaves a requeued child whose
 * ack brings its parent back by itself (flow-notify.lua). A parent with a failed child that is gone
 * for good would wait forever: it stays in the dead letters.
 */
export class FlowRequeue {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly trees: FlowTrees,
  ) {}

  /** Whether dead letter `id` (of this partition) is a flow's parent dead as child-failed. */
  async isDeadParent(topic: string, partition: number, id: string): Promise<boolean> {
    const keys = this.layouts.get(topic).partitions[partition];
    const [open, info] = await sendCommand(this.scripts.client, REQUEUE, topic, () =>
      Promise.all([this.scripts.client.sismember(keys.flowOpen, id), this.scripts.client.hget(keys.deadInfo, id)]),
    );
    return open === 1 && reasonOf(info) === 'child-failed';
  }

  /** The first failed child below this dead parent (down the tree) that can never end well, if any. */
  async goneBelow(parent: FlowLink): Promise<GoneChild | undefined> {
    for (const child of failedChildren(await this.childrenOf(parent))) {
      const standing = await this.standing(child, parent);
      if (standing === 'gone') return { parent, child };
      const below = standing === 'dead-parent' ? await this.goneBelow(child) : undefined;
      if (below) return below;
    }
    return undefined;
  }

  /**
   * Requeues the failed children of this dead parent (and theirs, down the tree), then sends it
   * to wait for them. False when it stays in the dead letters: a failed child is gone for good
   * (then nothing is requeued), or failed again meanwhile.
   */
  async requeue(parent: FlowLink): Promise<boolean> {
    return (await this.goneBelow(parent)) === undefined && this.resume(parent);
  }

  private async resume(parent: FlowLink): Promise<boolean> {
    const failed = failedChildren(await this.childrenOf(parent));
    for (const child of failed) {
      const [, requeued, ...parents] = await this.scripts.run<(number | string)[]>(
        'deadRequeue',
        child.topic,
        this.layouts.get(child.topic).partitions[child.partition],
        [0, 0, child.id],
      );
      if (parents.length > 0 && !(await this.resume(child))) return false;
      if (requeued === 1) await this.scripts.wakeHome(this.layouts.get(child.topic));
      else if (parents.length === 0 && (await this.standing(child, parent)) === 'gone') return false;
    }
    const layout = this.layouts.get(parent.topic);
    const resumed = await this.scripts.run<number>('flowResume', parent.topic, layout.partitions[parent.partition], [
      parent.id,
      ...failed.flatMap((child) => [childField(child), child.seq]),
    ]);
    if (resumed === 2) await this.scripts.wakeHome(layout);
    return resumed > 0;
  }

  private async childrenOf({ topic, partition, id }: FlowLink): Promise<FlowChildRecord[]> {
    return (await this.trees.record(topic, partition, id)).children;
  }

  /**
   * A failed child is there while it keeps its link to this parent (dead, requeued, running), or
   * its ack is on its way to the parent (its outbox entry); else it is gone (cancelled, its dead
   * letter deleted).
   */
  private async standing(child: FlowLink, parent: FlowLink): Promise<ChildStanding> {
    const keys = this.layouts.get(child.topic).partitions[child.partition];
    const { client } = this.scripts;
    const [ref, outbox, dead] = await sendCommand(client, REQUEUE, child.topic, () =>
      Promise.all([
        client.hget(keys.flowParents, child.id),
        client.hget(keys.flowOutbox, child.id),
        client.zscore(keys.dead, child.id),
      ]),
    );
    if (ref === null) return outbox !== null && /^\d+\na\n/.test(outbox) ? 'there' : 'gone';
    const link = linkOf(ref);
    if (link.topic !== parent.topic || link.id !== parent.id) return 'gone';
    return dead !== null && (await this.isDeadParent(child.topic, child.partition, child.id)) ? 'dead-parent' : 'there';
  }
}

/** The children whose failure sent their parent to the dead letters. */
function failedChildren(children: FlowChildRecord[]): FlowChildRecord[] {
  return children.filter(({ outcome, policy }) => outcome === 'failed' && policy === 'fail');
}

/** The reason a dead letter's info records (`r`), if it can be read. */
function reasonOf(info: string | null): unknown {
  try {
    return info === null ? undefined : (JSON.parse(info) as { r?: unknown }).r;
  } catch {
    return undefined;
  }
}
