import type { MessageInfo, MessageState } from '../../interfaces';
import { decodeListReply } from '../codecs/lookup-format';
import { placePage, type PartitionOrder } from '../codecs/merged-pages';
import type { QueueKeys } from '../keys/queue-keys';
import type { ScriptRunner } from '../scripts/script-runner';
import type { TopicLayouts } from '../scripts/topic-layouts';

/** A checked MessageFilter: times as epoch ms. */
export interface EngineFilter {
  /** Messages pushed with this tag. */
  tag?: string;
  /** Pushed at or after (epoch ms). */
  from?: number;
  /** Pushed at or before (epoch ms). */
  to?: number;
  /** Dead letters whose last error text contains this. */
  errorContains?: string;
}

/**
 * Entries of a state (or of a tag's index) one filter-page.lua call examines: a bounded call,
 * so a filter over a large state never holds Redis for long (it reads bodies for a time range
 * without a tag). The walk goes on from where the last call stopped.
 */
const WALK_BATCH = 1_000;
/** Ids one list-rows.lua call reads (Lua's unpack has a limit). */
const ROWS_BATCH = 1_000;

/** The matches of a walk: ids and their sort keys (ascending: a descending key is negated). */
interface Matches {
  ids: string[];
  keys: number[];
}

/**
 * Filtered look-ups (see prelude-filter.lua): how many messages of a state match a filter, and a
 * page of them, each partition walked a batch per call, a partitioned topic's pages merged by
 * sort key. Over several calls this is no snapshot: a message that moves meanwhile may be
 * counted in its old state, its new one, or neither.
 */
export class MessageFilters {
  constructor(
    private readonly scripts: ScriptRunner,
    private readonly layouts: TopicLayouts,
    private readonly defaultMaxAttempts: number,
  ) {}

  /** How many messages of the state match, over every partition (list-order.lua's size without a filter). */
  async count(topic: string, state: MessageState, filter: EngineFilter): Promise<number> {
    const { partitions } = this.layouts.get(topic);
    // Without a filter, the state's size: one call per partition, whatever its size.
    const whole = Object.keys(filter).length === 0;
    const counts = await Promise.all(
      partitions.map(async (keys) =>
        whole
          ? Number((await this.scripts.run<(number | string)[]>('listOrder', topic, keys, [state, 0]))[0])
          : (await this.walk(topic, keys, state, filter, 'count')).count,
      ),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }

  /**
   * A page of the matches in walk order (with a tag: by push time, oldest first; without one: the
   * state's serving order, as list shows it), of several partitions merged by that order.
   */
  async list<T>(
    topic: string,
    state: MessageState,
    filter: EngineFilter,
    offset: number,
    limit: number,
    preview = 0,
    defaultMaxAttempts = this.defaultMaxAttempts,
  ): Promise<MessageInfo<T>[]> {
    const { partitions } = this.layouts.get(topic);
    const found = await Promise.all(
      partitions.map((keys) => this.walk(topic, keys, state, filter, 'ids', offset + limit)),
    );
    const orders: PartitionOrder[] = found.map(({ matches }) => ({ size: matches.ids.length, keys: matches.keys }));
    const { skipped, sources } = placePage(orders, offset, limit);
    const taken = partitions.map((_, p) => sources.filter((source) => source === p).length);
    const rows = await Promise.all(
      partitions.map((keys, p) =>
        this.rows<T>(
          topic,
          keys,
          state,
          found[p].matches.ids.slice(skipped[p], skipped[p] + taken[p]),
          preview,
          defaultMaxAttempts,
        ),
      ),
    );
    // Rows that moved since the walk leave their place empty.
    const next = partitions.map(() => 0);
    const byId = rows.map((page) => new Map(page.map((row) => [row.id, row])));
    return sources.flatMap((p) => {
      const id = found[p].matches.ids[skipped[p] + next[p]++];
      const row = byId[p].get(id);
      return row ? [row] : [];
    });
  }

  /**
   * Walks one partition a batch per call until it is exhausted, or (mode 'ids') until `enough`
   * matches are found: the count, and in mode 'ids' the matches with ascending sort keys.
   */
  private async walk(
    topic: string,
    keys: QueueKeys,
    state: MessageState,
    filter: EngineFilter,
    mode: 'ids' | 'count',
    enough = Infinity,
  ): Promise<{ count: number; matches: Matches }> {
    const args = [filter.tag ?? '', filter.from ?? '', filter.to ?? '', filter.errorContains ?? ''];
    // Completed messages are walked newest first: their keys descend, so they are negated to ascend.
    const sign = state === 'completed' && filter.tag === undefined ? -1 : 1;
    const matches: Matches = { ids: [], keys: [] };
    let count = 0;
    let start = 0;
    while (start >= 0 && matches.ids.length < enough) {
      const reply = await this.scripts.run<(string | number)[]>('filterPage', topic, keys, [
        state,
        start,
        WALK_BATCH,
        mode,
        ...args,
      ]);
      start = Number(reply[0]);
      count += Number(reply[1]);
      for (let i = 2; i < reply.length; i += 2) {
        matches.ids.push(String(reply[i]));
        matches.keys.push(sign * Number(reply[i + 1]));
      }
    }
    return { count, matches };
  }

  /** The rows of the given ids still in the state, list-rows.lua a batch at a time. */
  private async rows<T>(
    topic: string,
    keys: QueueKeys,
    state: MessageState,
    ids: string[],
    preview: number,
    defaultMaxAttempts: number,
  ): Promise<MessageInfo<T>[]> {
    const pages: MessageInfo<T>[][] = [];
    for (let i = 0; i < ids.length; i += ROWS_BATCH) {
      const batch = ids.slice(i, i + ROWS_BATCH);
      const reply = await this.scripts.run<(string | number | null)[]>('listRows', topic, keys, [
        state,
        preview,
        ...batch,
      ]);
      pages.push(decodeListReply<T>(state, reply, defaultMaxAttempts, preview > 0));
    }
    return pages.flat();
  }
}
