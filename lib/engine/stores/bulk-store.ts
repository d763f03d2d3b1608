import { createHash, randomBytes } from 'node:crypto';
import { PayloadDecodeError } from '../../errors';
import type { BulkActionKind, BulkState, BulkStatus, MessageState } from '../../interfaces';
import { linkOfField } from '../codecs/flow-format';
import { resealStored, type TextResealer } from '../codecs/reseal-format';
import { bodyTail, encodePushBody, sealedPushBody, tryDecodeBody } from '../codecs/wire-format';
import { idInPartition, partitionTags } from '../keys/partitions';
import { bulkIndexKeys, queueKeys, tagKeys, type BulkIndexKeys, type QueueKeys } from '../keys/queue-keys';
import type { RedisClient } from '../redis/connection';
import { sendCommand } from '../redis/redis-command';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';
import type { FlowRequeue } from './flow-requeue';
import type { FlowEnds } from './flow-trees';
import type { MessageLookup } from './message-lookup';

/** How long a bulk action's keys live after its last step, and its record after it ended (ms). */
export const BULK_TTL_MS = 24 * 60 * 60 * 1000;

/** The state a bulk action selects: `any` (reencrypt's) is every message with a body or record. */
export type BulkSelectedState = MessageState | 'any';

/** What a bulk action selects: a state and the filter's fields as the select script takes them. */
export interface BulkSelection {
  /** What it does to each selected message. */
  action: BulkActionKind;
  /** The state it selects. */
  state: BulkSelectedState;
  /** Only messages with this tag. */
  tag?: string;
  /** Only messages pushed at or after this (epoch ms). */
  from?: number;
  /** Only messages pushed at or before this (epoch ms). */
  to?: number;
  /** Only dead letters whose last error text contains this. */
  errorContains?: string;
  /** Its pace: at most this many messages a second. */
  maxPerSecond: number;
  /**
   * What a runner must have to run it ('' or absent: nothing): for reencrypt, the id of the key
   * the starting service's codec seals with ('' for a codec without key ids).
   */
  requires?: string;
}

/** A bulk action a runner holds: where its keys are and what it does. */
export interface ClaimedBulk {
  /** Its id. */
  id: string;
  /** The topic it acts on. */
  topic: string;
  /** What it does. */
  action: BulkActionKind;
  /** The state it selected. */
  state: BulkSelectedState;
  /** Its pace (messages a second). */
  maxPerSecond: number;
  /** What a runner must have to run it (see BulkSelection.requires; '' for nothing). */
  requires: string;
  /** Keys of each partition of its topic, by the count it was started with. */
  partitions: QueueKeys[];
  /** Its topic's plain-tag keys (a partitioned topic's consumers wait on its wake list). */
  home: QueueKeys;
}

/** A claim's answer: the bulk action held, or why not (`held`: another runner's lease, for `retryInMs`). */
export type BulkClaim =
  | { outcome: 'running'; bulk: ClaimedBulk }
  | { outcome: 'held'; retryInMs: number }
  | { outcome: 'done' | 'aborted' | 'gone' };

/** What one step did in one partition. */
export interface BulkStep {
  /** Ids it acted on. */
  acted: number;
  /** Ids it passed over: no longer in the selected state. */
  skipped: number;
  /** Ids left in that partition's snapshot. */
  left: number;
}

/**
 * Bulk actions in Redis: the selection (one script per partition, at once), the record in the
 * topic's first partition (its lease, where it stands), the steps, abort and status; and the
 * prefix-wide index (bulk id -> topic and partition count; the running ids), one slot of its own.
 * What spans slots is carried here: a cancelled flow child's end passed on to its parent, a
 * cancelled parent's children cancelled in turn, a child-failed parent requeued with its children.
 */
export class BulkStore {
  private readonly index: BulkIndexKeys;

  constructor(
    private readonly client: RedisClient,
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly prefix: string,
    private readonly parts: {
      flows: FlowEnds;
      requeue: FlowRequeue;
      lookup: MessageLookup;
      /** Whether push writes the compact form (and grouped messages wait in their groups' ZSETs). */
      compact: () => boolean;
    },
  ) {
    this.index = bulkIndexKeys(prefix);
  }

  /** Selects in every partition, then writes the record and the index: returns its id, count and start. */
  async start(topic: string, selection: BulkSelection): Promise<{ id: string; selected: number }> {
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, 'start a bulk action');
    // Hex: never a leading '-', which a CLI would take for an option (`bulk-status <id>`).
    const id = randomBytes(9).toString('hex');
    const { action, state, tag, from, to, errorContains, maxPerSecond, requires = '' } = selection;
    const args = [id, state, tag ?? '', from ?? '', to ?? '', errorContains ?? '', BULK_TTL_MS];
    const counts = await Promise.all(
      layout.partitions.map((keys) => this.scripts.run<number>('bulkSelect', topic, keys, args)),
    );
    const selected = counts.reduce((sum, n) => sum + n, 0);
    const count = layout.partitions.length;
    await this.scripts.run('bulkRecord', topic, layout.partitions[0], [
      id,
      'create',
      action,
      state,
      maxPerSecond,
      count,
      selected,
      BULK_TTL_MS,
      requires,
    ]);
    // Indexed once its record exists: a runner or status that finds no record forgets the id.
    // One that needs the codec is listed apart: a runner of an earlier release would take its
    // action for another (see BulkIndexKeys.bulkRunningCodec).
    const running = action === 'reencrypt' ? this.index.bulkRunningCodec : this.index.bulkRunning;
    await this.command('start a bulk action', topic, () =>
      Promise.all([
        this.client.hset(this.index.bulkIndex, id, JSON.stringify([topic, count])),
        selected > 0 ? this.client.sadd(running, id) : Promise.resolve(0),
      ]),
    );
    return { id, selected };
  }

  /** The ids of the bulk actions not yet done or aborted (as far as the index knows). */
  running(): Promise<string[]> {
    return this.command('run a bulk action', undefined, () =>
      this.client.sunion(this.index.bulkRunning, this.index.bulkRunningCodec),
    );
  }

  /** Takes (or renews) the runner's lease on a bulk action, by the server clock. */
  async claim(id: string, token: string, leaseMs: number): Promise<BulkClaim> {
    const where = await this.locate(id);
    if (!where) {
      await this.forget(id);
      return { outcome: 'gone' };
    }
    const { topic, partitions, home } = where;
    const reply = await this.scripts.run<(string | number)[]>('bulkRecord', topic, partitions[0], [
      id,
      'claim',
      token,
      leaseMs,
      BULK_TTL_MS,
    ]);
    const outcome = String(reply[0]);
    if (outcome === 'held') return { outcome, retryInMs: Number(reply[1]) };
    if (outcome !== 'running') {
      await this.forgetRunning(id);
      if (outcome === 'gone') await this.forget(id);
      return { outcome: outcome as 'done' | 'aborted' | 'gone' };
    }
    const [, action, state, maxPerSecond, , requires] = reply;
    return {
      outcome,
      bulk: {
        id,
        topic,
        action: action as BulkActionKind,
        state: state as BulkSelectedState,
        maxPerSecond: Number(maxPerSecond),
        requires: String(requires ?? ''),
        partitions,
        home,
      },
    };
  }

  /**
   * One step in one partition (see bulk-step.lua), then what spans slots: a cancelled child's
   * parent hears of it, a cancelled parent's children that had not ended are cancelled, a
   * child-failed parent is requeued with its failed children (or, with a child gone for good,
   * stays dead). Replay and reencrypt peek first and compute each message's new value here;
   * reencrypt's `reseal` (the runner's, from the topic's codec) seals each text again.
   */
  async step(bulk: ClaimedBulk, partition: number, count: number, reseal?: TextResealer): Promise<BulkStep> {
    const { id, topic, action, state } = bulk;
    const keys = bulk.partitions[partition];
    const args: (string | number)[] = [id, action, state, count, BULK_TTL_MS];
    if (action === 'replay' || action === 'reencrypt') {
      const peeked = await this.scripts.run<(string | null)[]>('bulkStep', topic, keys, [id, 'peek', state, count, 0]);
      if (peeked.length === 0) return { acted: 0, skipped: 0, left: 0 };
      if (action === 'replay') args.push(this.parts.compact() ? '1' : '0', ...this.copies(bulk, partition, peeked));
      else args.push(...(await resealed(peeked, reseal!)));
    }
    const [acted, skipped, left, written, parents, children] = await this.scripts.run<
      [number, number, number, string[], string[], string[]]
    >('bulkStep', topic, keys, args);
    await this.parts.flows.passOn(topic, partition, written);
    for (const parent of parents) await this.parts.requeue.requeue({ topic, id: parent, partition });
    for (const field of children) await this.cancelLive(linkOfField(field));
    if (action === 'requeue' && acted > 0 && bulk.partitions.length > 1)
      await this.scripts.run('wake', topic, bulk.home, []);
    return { acted, skipped, left };
  }

  /**
   * Replay's copies of what a peek read (id, body or record, priority, tags per original): each a
   * new id routed to the original's partition (its group chooses it, when it has one; else its
   * id), made from the original's id and the bulk action's, so a step run again makes the same
   * copy. A body that cannot be read, or a record of an earlier release (no body kept), gives ''.
   */
  private copies(bulk: ClaimedBulk, partition: number, peeked: (string | null)[]): string[] {
    const items: string[] = [];
    for (let i = 0; i < peeked.length; i += 4) {
      const [original, stored, priority, tags] = peeked.slice(i, i + 4);
      const copy = idInPartition(`${original}~${bulk.id}`, partition, bulk.partitions.length);
      const body = stored === null ? {} : tryDecodeBody(bulk.state === 'completed' ? keptBody(stored) : stored);
      let encoded = '';
      if ('p' in body && body.p !== undefined) {
        const { p, h, g, m } = body;
        encoded = encodePushBody(
          bulk.topic,
          p,
          { headers: h, group: g, maxAttempts: m },
          Number.MAX_SAFE_INTEGER,
          this.parts.compact(),
        );
      } else if (typeof body.e === 'string') {
        // Sealed by a codec: the copy keeps the sealed text as it is.
        encoded = sealedPushBody(body.e, bodyTail({ group: body.g, maxAttempts: body.m }, 0));
      }
      items.push(String(original), copy, encoded, priority ?? '0', body.g ?? '', tags ?? '');
    }
    return items;
  }

  /** Gives its lease back, while this runner holds it (a runner that cannot run it): another may claim it at once. */
  async release(bulk: ClaimedBulk, token: string): Promise<void> {
    await this.scripts.run<number>('bulkRecord', bulk.topic, bulk.partitions[0], [bulk.id, 'release', token]);
  }

  /** Marks it done, while this runner still holds it; then out of the running index. */
  async finish(bulk: ClaimedBulk, token: string): Promise<boolean> {
    const done = await this.scripts.run<number>('bulkRecord', bulk.topic, bulk.partitions[0], [
      bulk.id,
      'finish',
      token,
      BULK_TTL_MS,
    ]);
    await this.forgetRunning(bulk.id);
    return done === 1;
  }

  /**
   * Stops it: the record first (aborted), then every partition's snapshot deleted; once this
   * resolves no step acts on anything. True when it was running.
   */
  async abort(id: string): Promise<boolean> {
    const where = await this.locate(id);
    if (!where) return false;
    const { topic, partitions } = where;
    const [first, ...others] = partitions;
    const was = await this.scripts.run<number>('bulkAbort', topic, first, [id, '1', BULK_TTL_MS]);
    await Promise.all(others.map((keys) => this.scripts.run('bulkAbort', topic, keys, [id, '0', BULK_TTL_MS])));
    await this.forgetRunning(id);
    return was === 1;
  }

  /** Where it stands: the record, and the progress summed over the partitions; null without a record. */
  async status(id: string): Promise<BulkStatus | null> {
    const where = await this.locate(id);
    if (!where) return null;
    const { topic, partitions } = where;
    const operation = 'read a bulk action';
    const [record, ...progress] = await this.command(operation, topic, () =>
      Promise.all([
        this.client.hmget(partitions[0].bulk + id, 'a', 'x', 'sel', 'c'),
        ...partitions.map((keys) => this.client.hmget(keys.bulk + id, 'p', 's', 'u')),
      ]),
    );
    const [action, state, selected, createdAt] = record;
    if (state === null) {
      await this.forget(id);
      return null;
    }
    const sum = (i: number) => progress.reduce((total, values) => total + Number(values[i] ?? 0), 0);
    return {
      id,
      topic,
      action: action as BulkActionKind,
      state: state as BulkState,
      selected: Number(selected),
      processed: sum(0),
      skipped: sum(1),
      ...(action === 'reencrypt' && { failed: sum(2) }),
      createdAt: Number(createdAt),
    };
  }

  /** A cancelled parent's child, cancelled while it has not ended; and its own children in turn. */
  private async cancelLive(child: { topic: string; id: string }): Promise<void> {
    const cancelled = await this.parts.lookup.cancel(child.topic, child.id, true);
    for (const below of cancelled?.children ?? []) await this.cancelLive(below);
  }

  /** Its topic and keys (by the partition count it was started with), from the index. */
  private async locate(id: string): Promise<{ topic: string; partitions: QueueKeys[]; home: QueueKeys } | null> {
    const value = await this.command('read a bulk action', undefined, () => this.client.hget(this.index.bulkIndex, id));
    if (value === null) return null;
    const [topic, count] = JSON.parse(value) as [string, number];
    return {
      topic,
      partitions: partitionTags(this.prefix, topic, count).map(tagKeys),
      home: queueKeys(this.prefix, topic),
    };
  }

  private async forgetRunning(id: string): Promise<void> {
    await this.command('run a bulk action', undefined, () =>
      Promise.all([this.client.srem(this.index.bulkRunning, id), this.client.srem(this.index.bulkRunningCodec, id)]),
    );
  }

  private async forget(id: string): Promise<void> {
    await Promise.all([
      this.command('run a bulk action', undefined, () => this.client.hdel(this.index.bulkIndex, id)),
      this.forgetRunning(id),
    ]);
  }

  private command<T>(operation: string, topic: string | undefined, send: () => Promise<T>): Promise<T> {
    return sendCommand(this.client, operation, topic, send);
  }
}

/**
 * Reencrypt's step arguments from what a peek read (id, value, priority, tags per id): per id
 * still stored, its id, the SHA1 of the value read (the step writes only over that value), and
 * 'w' with the value sealed again, 'c' (nothing to seal again) or 'u' (it could not be opened:
 * left as it is). An id no longer stored goes with no digest: the step passes it over.
 */
async function resealed(peeked: (string | null)[], reseal: TextResealer): Promise<string[]> {
  const items: string[] = [];
  for (let i = 0; i < peeked.length; i += 4) {
    const [id, stored] = peeked.slice(i, i + 2);
    if (id === null) continue;
    if (stored === null) {
      items.push(id, '', 'c', '');
      continue;
    }
    const digest = createHash('sha1').update(stored, 'utf8').digest('hex');
    try {
      const value = await resealStored(stored, reseal);
      items.push(id, digest, value === undefined ? 'c' : 'w', value ?? '');
    } catch (error) {
      if (!(error instanceof PayloadDecodeError)) throw error;
      items.push(id, digest, 'u', '');
    }
  }
  return items;
}

/** The body a completed record keeps (as the string "b"), or null. */
function keptBody(record: string): string | null {
  try {
    const parsed = JSON.parse(record) as { b?: unknown };
    return typeof parsed.b === 'string' ? parsed.b : null;
  } catch {
    return null;
  }
}
