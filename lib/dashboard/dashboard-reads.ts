import { readHistory, type HistoryRequest } from '../common/history-range';
import { RedisAckQueueError } from '../errors';
import type {
  GroupUsage,
  GroupUsageCounts,
  MessageInfo,
  MessageState,
  OutboxDeadRow,
  OutboxStatus,
  QueueGauges,
  ScalingReport,
  ScheduleInfo,
  TopicHistory,
} from '../interfaces';
import { internalsOf } from '../queue/queue-internals';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import type { Page } from './dashboard-input';
import { errorView, notFound, type ErrorView } from './dashboard-errors';
import { flowAnswer, messageDetail, type FlowAnswer, type MessageDetail } from './dashboard-flows';
import { redactFlow, redactMessage } from './dashboard-sealed';

/** The bytes of a payload a listed row carries (its details carry it whole). */
export const PREVIEW_BYTES = 300;

/**
 * One message as its details show it: its durable steps as a list by name, so a step
 * that returned nothing (no `value`: undefined) still shows once the answer is JSON.
 */

/** One row of the topics table: the topic's gauges, or why they could not be read. */
export type TopicRow = { topic: string } & (QueueGauges | { error: ErrorView });

/** The top groups' totals, as the topic view's table shows them. */
export type GroupUsageTable = Omit<GroupUsage, 'groups'> & { groups: ({ group: string } & GroupUsageCounts)[] };
/** The topic view's table: the last hour's top ten groups. */
const GROUP_USAGE_MS = 3_600_000;
const GROUP_USAGE_TOP = 10;

/** The outbox as the overview's panel shows it: its status and its first dead rows. */
export type OutboxPanel = OutboxStatus & { deadRows: OutboxDeadRow[] };
/** The dead rows the panel lists (the count says how many there are in all). */
export const OUTBOX_DEAD_SHOWN = 20;

/** What the dashboard reads: every method is one page of one thing, never a whole topic. */
export class DashboardReads {
  /**
   * @param revealSealed - The option `revealSealedPayloads`: send what a codec sealed, opened
   *   where this process can; else only its description (see dashboard-sealed.ts).
   */
  constructor(
    private readonly queue: RedisAckQueueService,
    private readonly revealSealed = false,
  ) {}

  /** A page of the registered topics whose names contain `search`, with their gauges. */
  async topics(search: string, page: Page): Promise<{ total: number; rows: TopicRow[] }> {
    const matching = (await this.queue.topics()).filter((topic) => topic.includes(search));
    const rows = await Promise.all(
      matching.slice(page.offset, page.offset + page.limit).map((topic) => this.row(topic)),
    );
    return { total: matching.length, rows };
  }

  /** One topic: its gauges and its schedules. */
  async topic(topic: string): Promise<{ topic: string; gauges: QueueGauges; schedules: ScheduleInfo[] }> {
    const [gauges, schedules] = await Promise.all([this.queue.gauges(topic), this.queue.schedules(topic)]);
    return { topic, gauges, schedules };
  }

  /**
   * A page of the messages of one state; dead letters with their reason. Rows carry a preview
   * of their payload, cut in Redis (the table never shows payloads): a topic of 1 MiB
   * messages costs a page of previews per refresh, not a page of bodies.
   */
  async messages(topic: string, state: MessageState, page: Page, tag?: string): Promise<MessageInfo[]> {
    const rows = await this.queue.list(topic, state, {
      ...page,
      preview: PREVIEW_BYTES,
      ...(tag !== undefined && { tag }),
    });
    return this.revealSealed ? rows : rows.map(redactMessage);
  }

  /** How many messages of one state have the tag: the total a filtered page counts to. */
  async count(topic: string, state: MessageState, tag: string | undefined): Promise<{ count: number }> {
    return { count: await this.queue.count(topic, state, tag === undefined ? {} : { tag }) };
  }

  /**
   * One message by id; a 404 when the topic has none. Of a flow's parent: its children counted
   * by outcome and the first of them listed (see messageDetail).
   */
  async message(topic: string, id: string): Promise<MessageDetail> {
    const message = await this.queue.get(topic, id);
    if (!message) throw notFound(`message ${id} in ${topic}`);
    return messageDetail(this.revealSealed ? message : redactMessage(message));
  }

  /**
   * A flow's tree from one message down, each node with its state: at most `budget` nodes, the
   * rest counted (see flowAnswer); a 404 when the topic has no message with this id.
   */
  async flow(topic: string, id: string, budget: number): Promise<FlowAnswer> {
    const root = await this.queue.getFlow(topic, id);
    if (!root) throw notFound(`message ${id} in ${topic}`);
    return flowAnswer(this.revealSealed ? root : redactFlow(root), budget);
  }

  /**
   * A topic's history over a checked range, one point per step (what the charts and the topics'
   * trends draw): the queue's history(), with the last `lastMs` measured on the server's clock.
   */
  history(topic: string, request: HistoryRequest): Promise<TopicHistory> {
    return readHistory(this.queue, topic, request);
  }

  /** A topic's scaling signal (one read, as `scaling()`), `null` when it has no target: the topic view's panel. */
  async scaling(topic: string): Promise<{ scaling: ScalingReport | null }> {
    return { scaling: await this.queue.scaling(topic) };
  }

  /**
   * The topic's top groups by handler time over the last hour (the topic view's table): their
   * totals, without their minutes. Group names are the user's data: the page shows them as text.
   */
  async groupUsage(topic: string): Promise<GroupUsageTable> {
    const { groups, ...usage } = await this.queue.groupUsage(topic, { lastMs: GROUP_USAGE_MS, top: GROUP_USAGE_TOP });
    return { ...usage, groups: groups.map(({ minutes: _minutes, ...totals }) => totals) };
  }

  /**
   * The outbox's status and its first dead rows (the overview's panel), `null` when the service
   * has no `outbox` option. Reads PostgreSQL only. Topics, ids and reasons are the user's data:
   * the page shows them as text.
   */
  async outbox(): Promise<{ outbox: OutboxPanel | null }> {
    if (!internalsOf(this.queue).outbox) return { outbox: null };
    const [status, deadRows] = await Promise.all([
      this.queue.outboxStatus(),
      this.queue.outboxDead({ limit: OUTBOX_DEAD_SHOWN }),
    ]);
    return { outbox: { ...status, deadRows } };
  }

  private async row(topic: string): Promise<TopicRow> {
    try {
      return { topic, ...(await this.queue.gauges(topic)) };
    } catch (error) {
      // One topic this app cannot read (another partition count, a foreign key) keeps the table.
      if (error instanceof RedisAckQueueError && error.code !== 'REDIS_UNAVAILABLE') {
        return { topic, error: errorView(error) };
      }
      throw error;
    }
  }
}
