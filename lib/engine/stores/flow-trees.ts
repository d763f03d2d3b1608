import { LIMITS } from '../../common/redis-ack-queue.constants';
import { MESSAGES } from '../../common/redis-ack-queue.messages';
import { FlowIdTakenError, QueueKeyTypeError } from '../../errors';
import { sendCommand } from '../redis/redis-command';
import type { MessageWriter } from './message-writer';
import type { RelayReceipts } from './relay-receipts';
import type { QueueKeys } from '../keys/queue-keys';
import type { ScriptRunner } from '../scripts/script-runner';
import { partitionOfMessage, type TopicLayouts } from '../scripts/topic-layouts';
import type { DeadParent } from '../codecs/lease-shapes';
import { PUSH_RELAYED, type EncodedPush } from '../codecs/wire-format';
import type { ReservedMessage } from '../../interfaces';
import {
  childField,
  decodeChildPairs,
  decodeChildren,
  failureOf,
  FLOW_HELD,
  isFlowChild,
  linkOf,
  splitEntry,
  type FlowChildRecord,
  type FlowLink,
  type FlowRecord,
  type StoredLink,
} from '../codecs/flow-format';

/** How long an outbox entry may wait before the sweep passes it on: its writer normally does at once. */
const OUTBOX_AGE_MS = 1_000;
/** How long a node may wait for its flow's root before the sweep looks whether the root is there. */
const UNCOMMITTED_AGE_MS = 10_000;
/** A node whose root never came (its pushFlow failed and was not retried) is dropped after this. */
const ABANDONED_AGE_MS = 60 * 60_000;
/** Entries of each kind one sweep of a partition takes. */
const SWEEP_LIMIT = 100;

/** A node of a flow as pushFlow hands it to the engine (checked and encoded already). */
export interface FlowPlanNode {
  topic: string;
  /** Its id (given or made), its body (with its place in the flow) and its push options. */
  item: EncodedPush;
  priority: number;
  /** Its own delay, counted from when it may start: its flow is stored (a leaf), its children ended (a parent). */
  delayMs: number;
  availableAt: number;
  /** Its `onChildFailure`: 'f' fails its parent when it dies, 'c' lets the parent run. */
  policy: 'f' | 'c';
  children: FlowPlanNode[];
}

/**
 * What a consumer needs of flows (see FlowTrees): the ends of a flow's children are passed on
 * by the engine itself, and the parents that die of them reported through onParentsDead.
 */
export interface ConsumerFlows {
  /**
   * The largest result this message's ack hands to its flow's parent (JSON bytes; the service's
   * maxPayloadBytes); undefined when it has no parent (its ack hands nothing on).
   */
  resultBound(message: ReservedMessage<unknown>): number | undefined;
  /** A parent's children and their ends, for its handler: as its reserve read them, else read now. */
  recordOf(topic: string, message: ReservedMessage<unknown>): Promise<Pick<FlowRecord, 'children'>>;
  /** Passes on what a process that died left of this topic's flows (see FlowTrees.sweep). */
  sweep(topic: string): Promise<void>;
}

/** What a store that runs a script ending flow children needs: passing the ends it answered on. */
export interface FlowEnds {
  passOn(topic: string, partition: number, written: readonly string[] | undefined): Promise<void>;
}

/** Hears the flow parents that went to the dead letters as child-failed (for their `dead` events). */
export type DeadParentsListener = (parents: DeadParent[]) => void;

/**
 * Flows across slots. pushFlow stores every node held (in `delayed` at FLOW_HELD) below the
 * root first, then the root (the commit: a node is part of a flow once its root exists), then
 * makes the leaves due; the sweep finishes a commit a process did not. A child's end is written
 * to an outbox in its own slot by the script that ends it, which answers it too; the engine's
 * store that ran the script passes it on (passOn) to its parent's slot (flow-notify.lua,
 * idempotent by the end's sequence), which clears it too where parent and child share a slot,
 * else it is cleared after (flow-clear.lua, not waited for). All the ends one script wrote go
 * in one call per parents' slot and one clear, not a pair per child. The sweep passes what a process
 * that died left in an outbox. So no parent starts before every child is acked, and none waits
 * for an end that was written. A parent's children come with its reserve (reserve.lua reads
 * its children's HASH, which lives in the parent's slot), so its handler reads nothing more.
 */
export class FlowTrees implements ConsumerFlows, FlowEnds {
  /** Flow parents leased, with their children as their reserve read them (see recordOf). */
  private readonly carried = new WeakMap<ReservedMessage<unknown>, FlowChildRecord[]>();
  private deadListener: DeadParentsListener | undefined;

  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly writer: MessageWriter,
    private readonly dead: { maxCount: number; maxAgeMs: number },
    readonly maxResultBytes: number,
    private readonly receipts: RelayReceipts,
  ) {}

  /**
   * Stores a flow; true per node where it was stored now, false where it existed (a retry of
   * the same pushFlow, which then finishes the same flow). Safe to call again after any failure.
   * A root with a relay receipt (`root.item.receipt`, the outbox relay's) carries it on its own
   * push, the flow's commit: 'relayed-before' when the receipt is held, and then nothing of
   * this flow runs (nodes stored held meanwhile, by a race with another relay, are never
   * committed: the sweep drops them).
   */
  async store(root: FlowPlanNode): Promise<Map<FlowPlanNode, boolean> | 'relayed-before'> {
    // A flow of one message is a push.
    if (root.children.length === 0) {
      const [code] = await this.writer.pushCodes(root.topic, [root.item]);
      return code === PUSH_RELAYED ? 'relayed-before' : new Map([[root, code === 1]]);
    }
    const nodes: { node: FlowPlanNode; link: FlowLink; parent?: FlowLink }[] = [];
    const links = new Map<FlowPlanNode, FlowLink>();
    const visit = async (node: FlowPlanNode, parent?: FlowLink) => {
      const layout = this.layouts.get(node.topic);
      if (!layout.verified) await this.layouts.verify(layout, 'push a flow');
      const { id, group } = node.item;
      const link = { topic: node.topic, id, partition: partitionOfMessage(layout, { id, group }) };
      nodes.push({ node, link, parent });
      links.set(node, link);
      for (const child of node.children) await visit(child, link);
    };
    await visit(root);
    const below = nodes.slice(1);
    const flags = new Map<FlowPlanNode, boolean>();
    const rootLink = links.get(root)!;
    const { receipt } = root.item;
    // Read-only, so a relay's second push of a flow stores not even its held nodes. Its root was
    // stored with the receipt: a commit the first relay did not finish (it died, Redis restarted)
    // is finished here (a node already committed, or gone, is left as it is).
    if (receipt !== undefined && (await this.receipts.held(rootLink.topic, rootLink.partition, receipt))) {
      await this.commitAll(below.map(({ link }) => link));
      return 'relayed-before';
    }
    for (const { node, parent } of nodes) {
      const { item } = node;
      item.options = [0, Number(FLOW_HELD), node.priority, item.group ?? ''];
      const stored: StoredLink | undefined = parent && [
        parent.topic,
        parent.id,
        parent.partition,
        node.policy,
        rootLink.topic,
        rootLink.id,
        rootLink.partition,
        node.delayMs,
        node.availableAt,
      ];
      const children = node.children.map((child) => childField(links.get(child)!));
      item.flow = [
        stored ? JSON.stringify(stored) : '',
        children.length === 0 ? '' : [`${node.delayMs} ${node.availableAt}`, ...children].join('\n'),
      ];
    }
    // Its root exists: this flow was stored before (a retry). Its nodes may have run and ended
    // since, so none is stored again; only a commit the first call did not finish is finished.
    // A root (or parent) whose stored children are not the given ones is another message.
    if (await this.exists(links.get(root)!)) {
      const taken = await this.firstOtherParent(
        nodes.filter(({ node }) => node.children.length > 0),
        links,
      );
      if (taken) throw new FlowIdTakenError(taken.topic, taken.id);
      for (const { node } of nodes) flags.set(node, false);
      // A receipt is recorded by the root's push (a duplicate now), atomically with its check.
      const [code] = receipt === undefined ? [0] : await this.writer.pushCodes(root.topic, [root.item]);
      await this.commitAll(below.map(({ link }) => link));
      return code === PUSH_RELAYED ? 'relayed-before' : flags;
    }
    // Every node below the root, held; then the root; then the leaves are made due.
    let taken: FlowLink | undefined;
    await Promise.all(
      [...byKey(below, ({ node }) => node.topic)].map(async ([topic, group]) => {
        const codes = await this.writer.pushCodes(
          topic,
          group.map(({ node }) => node.item),
        );
        group.forEach(({ node, link }, i) => {
          flags.set(node, codes[i] === 1);
          if (codes[i] === 3) taken = link;
        });
      }),
    );
    // A node's id belongs to another message: no root, so nothing of this flow ever runs.
    if (taken) throw new FlowIdTakenError(taken.topic, taken.id);
    const [rootCode] = await this.writer.pushCodes(root.topic, [root.item]);
    if (rootCode === PUSH_RELAYED) return 'relayed-before';
    flags.set(root, rootCode === 1);
    await this.commitAll(below.map(({ link }) => link));
    return flags;
  }

  /** Commits nodes of one flow: one flow-commit.lua call per slot (and 500 ids). */
  private async commitAll(links: FlowLink[]): Promise<void> {
    await Promise.all(
      [...byKey(links, (link) => `${link.partition} ${link.topic}`)].map(([, group]) =>
        this.commit(
          group[0].topic,
          group[0].partition,
          group.map(({ id }) => id),
        ),
      ),
    );
  }

  /** The one listener of the parents that go to the dead letters as child-failed (set once, by the service). */
  onParentsDead(listener: DeadParentsListener): void {
    this.deadListener = listener;
  }

  resultBound(message: ReservedMessage<unknown>): number | undefined {
    return isFlowChild(message) ? this.maxResultBytes : undefined;
  }

  /** Keeps the children a reserve read of the flow parents it leased (reserve.lua's answer: id, HGETALL, ...). */
  carry(messages: ReservedMessage<unknown>[], parents: (string | string[])[]): void {
    for (let i = 0; i < parents.length; i += 2) {
      const message = messages.find(({ id }) => id === parents[i]);
      if (message) this.carried.set(message, decodeChildPairs(parents[i + 1] as string[]));
    }
  }

  recordOf(topic: string, message: ReservedMessage<unknown>): Promise<Pick<FlowRecord, 'children'>> {
    const children = this.carried.get(message);
    if (children) return Promise.resolve({ children });
    return this.record(topic, partitionOfMessage(this.layouts.get(topic), message), message.id);
  }

  /**
   * Passes on the outbox entries a script of this topic's partition wrote (its answer: child id,
   * entry, ...) to the children's parents, and reports the parents (and theirs, up the tree)
   * that went to the dead letters as child-failed. Never fails: an end not passed on waits in
   * the outbox for the sweep.
   */
  async passOn(topic: string, partition: number, written: readonly string[] | undefined): Promise<void> {
    if (!written || written.length === 0) return;
    const dead = await this.hearAll(topic, partition, written);
    if (dead.length > 0) this.deadListener?.(dead);
  }

  /**
   * The outbox entries of `written` (child id, entry, ...), all of one slot, reach their parents
   * (see endBatches), the calls sent together: each script is atomic on its own, and a parent
   * hears its children in any order. Returns the parents (up the tree) that went to the dead
   * letters. A call that fails leaves its ends in their outbox for the sweep, and takes none of
   * the other calls' dead parents with it.
   */
  private async hearAll(topic: string, partition: number, written: readonly string[]): Promise<DeadParent[]> {
    const heard = endBatches(topic, partition, written).map((ends) => this.hear(ends).catch(() => []));
    return heard.length === 1 ? heard[0] : (await Promise.all(heard)).flat();
  }

  /**
   * What a process that died mid-way left in this topic's slots: outbox entries its parents may
   * not have heard are passed on; nodes whose flow's root exists are committed; nodes whose
   * root never came within an hour are dropped. Safe beside every other process doing the same.
   * The parents that went to the dead letters as child-failed meanwhile are reported (onParentsDead).
   */
  async sweep(topic: string): Promise<void> {
    const dead: DeadParent[] = [];
    try {
      await this.sweepInto(topic, dead);
    } finally {
      if (dead.length > 0) this.deadListener?.(dead);
    }
  }

  private async sweepInto(topic: string, dead: DeadParent[]): Promise<void> {
    const { partitions } = this.layouts.get(topic);
    for (let partition = 0; partition < partitions.length; partition++) {
      const reply = await this.scripts.run<string[]>('flowSweep', topic, partitions[partition], [
        OUTBOX_AGE_MS,
        UNCOMMITTED_AGE_MS,
        SWEEP_LIMIT,
      ]);
      const now = Number(reply[0]);
      const outbox = Number(reply[1]);
      for (const ends of endBatches(topic, partition, reply.slice(2, 2 + 2 * outbox))) {
        dead.push(...(await this.hear(ends)));
      }
      for (let i = 2 + 2 * outbox; i < reply.length; i += 3) {
        const [id, ref, storedAt] = [reply[i], reply[i + 1], Number(reply[i + 2])];
        const root = JSON.parse(ref) as StoredLink;
        if (await this.exists({ topic: root[4], id: root[5], partition: root[6] })) {
          await this.commit(topic, partition, [id]);
        } else if (now - storedAt > ABANDONED_AGE_MS) {
          const reply = await this.scripts.run<[string, string[]] | null>('cancel', topic, partitions[partition], [id]);
          await this.passOn(topic, partition, reply?.[1]);
        }
      }
    }
  }

  /** A node's parent and children, as its slot records them (one read). */
  async record(topic: string, partition: number, id: string): Promise<FlowRecord> {
    const keys = this.keysOf(topic, partition);
    const [parent, children] = await this.read(topic, () =>
      Promise.all([
        this.scripts.client.hget(keys.flowParents, id),
        this.scripts.client.hgetall(keys.flowChildren + id),
      ]),
    );
    return { parent: parent ? linkOf(parent) : undefined, children: decodeChildren(children) };
  }

  private async commit(topic: string, partition: number, ids: string[]): Promise<void> {
    const layout = this.layouts.get(topic);
    let woke = false;
    for (let i = 0; i < ids.length; i += LIMITS.idsPerCall) {
      const reply = await this.scripts.run<number>(
        'flowCommit',
        topic,
        layout.partitions[partition],
        ids.slice(i, i + LIMITS.idsPerCall),
      );
      woke ||= reply === 1;
    }
    if (woke) await this.scripts.wakeHome(layout);
  }

  /**
   * Children's ends, all of one child slot and one parents' slot, reach their parents (one
   * flow-notify.lua call); then the children's outbox entries go (unless later ends replaced
   * them): in the same call where both share a slot, else after, in one flow-clear.lua call not
   * waited for (an entry left behind is passed again by the sweep, and heard once). Returns the
   * parents (up the tree) that went to the dead letters.
   */
  private async hear(ends: HeardEnd[]): Promise<DeadParent[]> {
    try {
      return await this.hearTogether(ends);
    } catch (error) {
      // A foreign key at one parent's HASH fails the whole call: each end alone then, so it fails
      // only its own (left in the outbox: the sweep's next call for it reports the error).
      if (!(error instanceof QueueKeyTypeError) || ends.length === 1) throw error;
      const alone = await Promise.all(ends.map((end) => this.hearTogether([end]).catch(() => undefined)));
      if (alone.every((dead) => dead === undefined)) throw error;
      return alone.flatMap((dead) => dead ?? []);
    }
  }

  /** `hear` in one flow-notify.lua call. */
  private async hearTogether(ends: HeardEnd[]): Promise<DeadParent[]> {
    const [{ child, parent }] = ends;
    const layout = this.layouts.get(parent.topic);
    const sameSlot = parent.topic === child.topic && parent.partition === child.partition;
    const args: (string | number)[] = [this.dead.maxCount, this.dead.maxAgeMs];
    for (const end of ends) {
      const { seq, outcome, policy, payload, error } = end;
      args.push(
        end.parent.id,
        childField(end.child),
        seq,
        outcome,
        policy,
        payload,
        error,
        sameSlot ? end.child.id : '',
      );
    }
    const codes = await this.scripts.run<(number | string[])[]>(
      'flowNotify',
      parent.topic,
      layout.partitions[parent.partition],
      args,
    );
    if (!sameSlot) {
      const keys = this.keysOf(child.topic, child.partition);
      const pairs = ends.flatMap(({ child: { id }, seq }) => [id, seq]);
      this.scripts.run('flowClear', child.topic, keys, pairs).catch(() => undefined);
    }
    // flow-notify.lua answers a code per end (2: its parent died of it, 3: its parent became
    // due), then the outbox entries the dead parents wrote: their own parents hear them.
    if (codes.includes(3)) await this.scripts.wakeHome(layout);
    const dead = ends
      .filter((_, i) => codes[i] === 2)
      .map(({ parent: { topic, id }, error }) => ({ topic, id, error }));
    const written = codes[ends.length] as string[];
    if (written.length === 0) return dead;
    return [...dead, ...(await this.hearAll(parent.topic, parent.partition, written))];
  }

  /**
   * The first of these parents (root first) that is stored with other children than given, or
   * stored without any (a message outside this flow); one that ended since is not looked at.
   */
  private async firstOtherParent(
    parents: { node: FlowPlanNode; link: FlowLink }[],
    links: Map<FlowPlanNode, FlowLink>,
  ): Promise<FlowLink | undefined> {
    const stored = await Promise.all(
      parents.map(({ link: { topic, id, partition } }) => {
        const keys = this.keysOf(topic, partition);
        const { client } = this.scripts;
        return this.read(topic, () =>
          Promise.all([client.hexists(keys.messages, id), client.hkeys(keys.flowChildren + id)]),
        );
      }),
    );
    return parents.find(({ node }, i) => {
      const [exists, fields] = stored[i];
      if (exists === 0 && fields.length === 0) return false;
      const children = new Set(fields.filter((field) => field.startsWith('[')));
      const given = node.children.map((child) => childField(links.get(child)!));
      return children.size !== given.length || given.some((field) => !children.has(field));
    })?.link;
  }

  private async exists({ topic, id, partition }: FlowLink): Promise<boolean> {
    const keys = this.keysOf(topic, partition);
    return (await this.read(topic, () => this.scripts.client.hexists(keys.messages, id))) === 1;
  }

  private keysOf(topic: string, partition: number): QueueKeys {
    return this.layouts.get(topic).partitions[partition];
  }

  private read<R>(topic: string, call: () => Promise<R>): Promise<R> {
    return sendCommand(this.scripts.client, 'read a flow', topic, call);
  }
}

/** A child's end as its parent hears it (an outbox entry, decoded). */
interface HeardEnd {
  child: FlowLink;
  parent: FlowLink;
  seq: string;
  outcome: string;
  /** The child's onChildFailure ('f' or 'c'). */
  policy: string;
  payload: string;
  /** The text a parent it fails keeps in the dead letters ('' for an end that fails none). */
  error: string;
}

function heardEnd(child: FlowLink, entry: string): HeardEnd {
  const [seq, outcome, ref, payload] = splitEntry(entry);
  const link = JSON.parse(ref) as StoredLink;
  const error = outcome === 'f' ? MESSAGES.childFailed(child.topic, child.id, failureOf(payload).reason) : '';
  return {
    child,
    parent: { topic: link[0], id: link[1], partition: link[2] },
    seq,
    outcome,
    policy: link[3],
    payload,
    error,
  };
}

/**
 * Outbox entries of one slot (child id, entry, ...) as flow-notify.lua calls take them: by their
 * parents' slot, at most 500 a call.
 */
function endBatches(topic: string, partition: number, written: readonly string[]): HeardEnd[][] {
  const bySlot = new Map<string, HeardEnd[]>();
  for (let i = 0; i < written.length; i += 2) {
    const end = heardEnd({ topic, id: written[i], partition }, written[i + 1]);
    const slot = `${end.parent.partition} ${end.parent.topic}`;
    const ends = bySlot.get(slot);
    if (ends) ends.push(end);
    else bySlot.set(slot, [end]);
  }
  const batches: HeardEnd[][] = [];
  for (const ends of bySlot.values()) {
    for (let start = 0; start < ends.length; start += LIMITS.idsPerCall) {
      batches.push(ends.slice(start, start + LIMITS.idsPerCall));
    }
  }
  return batches;
}

function byKey<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
