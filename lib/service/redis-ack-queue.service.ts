import type { OnApplicationShutdown } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ConsumerRegistry } from '../consumer/consumer-registry';
import { schedulerEnabled, ServiceScheduler } from '../consumer/service-scheduler';
import { ServiceBulkRunner } from '../consumer/service-bulk-runner';
import type {
  BatchOptions,
  BulkOptions,
  BulkStarted,
  BulkStatus,
  ReencryptOptions,
  RedisAckQueueBulkApi,
  ConsumerLiveness,
  DeadLetter,
  GroupWeights,
  GroupQuotas,
  GroupUsage,
  GroupUsageOptions,
  RedisAckQueueFleetApi,
  ScalingReport,
  ScalingTarget,
  ListOptions,
  MessageInfo,
  MessageFilter,
  MessageState,
  NackOptions,
  NackResult,
  PushManyItem,
  PushOptions,
  PlainPushOptions,
  PlainPushManyItem,
  KeyedPushResult,
  PushResult,
  QueueBatchHandlerFn,
  QueueConsumer,
  QueueGauges,
  QueueHandlerFn,
  QueueHandlerOptions,
  QueueStats,
  RedisAckQueueConsumerApi,
  RedisAckQueueEvent,
  RedisAckQueueFleetEvent,
  RedisAckQueueFleetEventsOptions,
  RedisAckQueueLookupApi,
  RedisAckQueueOptions,
  RedisAckQueuePauseApi,
  RedisAckQueueProducerApi,
  RedisAckQueueFlowApi,
  Flow,
  FlowNode,
  FlowResult,
  TypedFlow,
  RedisAckQueueScheduleApi,
  RedisAckQueueStoredFormat,
  RedisAckQueueTopicsApi,
  ReserveOptions,
  ReservedMessage,
  ScheduleDefinition,
  ScheduleInfo,
  ScheduleOptions,
  Topic,
  TopicHistory,
  TopicHistoryOptions,
  TopicLimits,
  RedisAckQueueOutboxApi,
  OutboxTransaction,
  OutboxPushResult,
  OutboxFlowResult,
  OutboxStatus,
  OutboxDeadRow,
} from '../interfaces';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { settleWithin } from '../common/settle-within';
import { QueueCore } from '../queue/queue-core';
import { QueueDeclarations } from '../queue/declarations';
import { QueueHistory } from '../queue/queue-history';
import { FleetEvents } from '../queue/fleet-events';
import { QueueInspection } from '../queue/queue-inspection';
import { QueueBulk } from '../queue/queue-bulk';
import { QueueLeases } from '../queue/queue-leases';
import { QueueLookup } from '../queue/queue-lookup';
import { QueueProducer } from '../queue/queue-producer';
import { QueueFlows } from '../queue/queue-flows';
import { QueueSchedules } from '../queue/queue-schedules';
import { QueueFormat } from '../queue/queue-format';
import { QueueTopics } from '../queue/queue-topics';
import { QueueReplies } from '../queue/queue-replies';
import { registerServiceInternals } from '../queue/queue-internals';
import { TopicControls } from '../queue/topic-controls';
import { QueueScaling } from '../queue/queue-scaling';
import { GroupQuotaControls } from '../queue/group-quota-controls';
import { GroupUsageReads } from '../queue/group-usage-reads';
import { assertTopic, optionsOf } from '../queue/validation';
import { QueueOutbox } from '../outbox/queue-outbox';
import { resolveOutboxSettings } from '../outbox/outbox-settings';

/**
 * The queue's public API: push, reserve, ack, nack, inspect, consume. Usable with `new`
 * outside Nest; the module provides the same class through dependency injection.
 *
 * It is one object over shared state (a `QueueCore`: settings, connection, engine,
 * events, closed state) holding one part per capability, each built once here: producing,
 * inspecting and dead letters, look-up and cancel, pause and limits, schedules, the topic
 * registry, consuming by hand, the running consumers with their scheduler, and what the
 * process declared (declared again when Redis comes back without this prefix's data). Each method
 * hands its call to one part; the parts check arguments and the closed state, report events,
 * and leave every state change to the engine (one Lua script each, timed by the Redis
 * server's clock).
 *
 * Methods that return a promise report every error by rejecting it; each error the library
 * raises is a {@link RedisAckQueueError} with a stable `code`.
 */
export class RedisAckQueueService
  implements
    RedisAckQueueProducerApi,
    RedisAckQueueFlowApi,
    RedisAckQueueConsumerApi,
    RedisAckQueueLookupApi,
    RedisAckQueuePauseApi,
    RedisAckQueueScheduleApi,
    RedisAckQueueTopicsApi,
    RedisAckQueueBulkApi,
    RedisAckQueueFleetApi,
    RedisAckQueueOutboxApi,
    OnApplicationShutdown
{
  /**
   * The events of this service, in this process only (its pushes, its consumers' deliveries, its
   * cancels): other processes' are not here. For every process's, see `fleetEvents$()`.
   */
  readonly events$: Observable<RedisAckQueueEvent>;
  private readonly core: QueueCore;
  private readonly producer: QueueProducer;
  private readonly flows: QueueFlows;
  private readonly inspection: QueueInspection;
  private readonly historyReads: QueueHistory;
  private readonly fleet: FleetEvents;
  private readonly lookup: QueueLookup;
  private readonly controls: TopicControls;
  private readonly scalingReads: QueueScaling;
  private readonly quotas: GroupQuotaControls;
  private readonly usage: GroupUsageReads;
  private readonly scheduling: QueueSchedules;
  private readonly registry: QueueTopics;
  private readonly format: QueueFormat;
  private readonly leases: QueueLeases;
  private readonly consumers: ConsumerRegistry;
  private readonly scheduler: ServiceScheduler;
  private readonly bulkRunner: ServiceBulkRunner;
  private readonly bulks: QueueBulk;
  private readonly declarations: QueueDeclarations;
  private readonly outbox: QueueOutbox;
  private closing: Promise<void> | undefined;

  /**
   * Checks the options and sets up the connection, which opens on first use: call
   * {@link RedisAckQueueService.connect} to fail fast.
   * @param options - Every option may be left out; {@link RedisAckQueueOptions} gives the defaults.
   * @param queueName - The name a Nest module registered the queue under, said in its startup
   * log line; leave it out outside Nest (or name the service as you like).
   * @throws {InvalidOptionError} when an option has a bad value, or `connection` has no known form
   * ({@link InvalidConnectionUrlError} for a connection string of another scheme, or a malformed one).
   * @throws {InvalidTopicError} when `prefix`, or a topic name in `topics`, is not a valid name.
   */
  constructor(
    options: RedisAckQueueOptions = {},
    private readonly queueName?: string,
  ) {
    const checked = optionsOf(options);
    const runsScheduler = schedulerEnabled(checked);
    // Checked before QueueCore connects: a bad outbox option leaves nothing behind.
    const outboxSettings = resolveOutboxSettings(checked.outbox);
    const core = new QueueCore(checked);
    const { engine, events, logger, settings } = core;
    this.core = core;
    this.events$ = events.stream$;
    this.consumers = new ConsumerRegistry(engine, { events, logger, codecs: core.codecs }, settings, core.tracing);
    this.scheduler = new ServiceScheduler(
      runsScheduler,
      engine.schedules,
      logger,
      (event) => {
        events.emit(event);
        // The scheduler's only event: a tick it pushed.
        if (event.type === 'pushed') events.tally.pushed(event.topic, 1);
      },
      () => this.consumers.size > 0,
    );
    this.bulkRunner = new ServiceBulkRunner(engine.bulks, logger, core.codecs, () => this.consumers.size > 0);
    this.bulks = new QueueBulk(core, this.bulkRunner);
    this.producer = new QueueProducer(core);
    this.flows = new QueueFlows(core, this.producer);
    this.outbox = new QueueOutbox(core, outboxSettings, {
      pushRelayed: (topic, items, receipts) => this.producer.pushRelayed(topic, items, receipts),
      pushFlowRelayed: (flow, receipt) => this.flows.pushFlowRelayed(flow, receipt),
      forgetReceipts: (topic, partition, receipts) => this.producer.forgetReceipts(topic, partition, receipts),
    });
    // For the package's own metrics and transport only (see queue-internals).
    registerServiceInternals(this, {
      replies: new QueueReplies(core),
      tally: events.tally,
      scaling: (topic, totals) => this.scalingReads.scalingWith(topic, totals),
      outbox: outboxSettings !== undefined,
    });
    this.inspection = new QueueInspection(core);
    this.historyReads = new QueueHistory(core);
    this.fleet = new FleetEvents(engine.fleetEvents, logger, settings.fleetEvents?.maxLen);
    this.fleet.start(events);
    this.lookup = new QueueLookup(core, (topic) => this.consumers.maxAttemptsFor(topic));
    this.controls = new TopicControls(core);
    this.scalingReads = new QueueScaling(core);
    this.quotas = new GroupQuotaControls(core);
    this.usage = new GroupUsageReads(core);
    this.scheduling = new QueueSchedules(core, this.scheduler);
    this.registry = new QueueTopics(core);
    this.format = new QueueFormat(core);
    this.leases = new QueueLeases(core);
    this.declarations = new QueueDeclarations(core, {
      declareSchedule: (topic, name, scheduleOptions) =>
        this.scheduling.upsertSchedule(topic, name, scheduleOptions, true),
      withdrawSchedules: (kept) => this.scheduling.withdrawSchedules(kept),
      consumerLimits: () => this.consumers.declaredLimits(),
      renewIds: () => this.producer.renewIds(),
    });
  }

  async connect(): Promise<void> {
    const { connection, settings, logger } = this.core;
    this.core.assertOpen('connect');
    await connection.open(settings.connectTimeoutMs, settings.allowEviction);
    logger.startup(MESSAGES.connected(this.describeConnection(), this.queueName));
    if (await this.core.engine.unescapedLayoutFound()) logger.warn(MESSAGES.unescapedPrefix(settings.prefix));
    await this.declarations.loadFormat();
    await this.declarations.watch();
    this.outbox.start();
  }

  describeConnection(): string {
    const { connection, settings } = this.core;
    return MESSAGES.connectionDescription(connection.target, settings.prefix, connection.tls);
  }

  push<T = unknown>(topic: Topic<T>, payload: NoInfer<T>, options?: PlainPushOptions | null): Promise<PushResult>;
  push<T = unknown>(topic: Topic<T>, payload: NoInfer<T>, options?: PushOptions | null): Promise<KeyedPushResult>;
  push<T = unknown>(topic: Topic<T>, payload: NoInfer<T>, options?: PushOptions | null): Promise<KeyedPushResult> {
    return this.producer.push(topic, payload, options);
  }

  pushMany<T = unknown>(topic: Topic<T>, items: PlainPushManyItem<NoInfer<T>>[]): Promise<PushResult[]>;
  pushMany<T = unknown>(topic: Topic<T>, items: PushManyItem<NoInfer<T>>[]): Promise<KeyedPushResult[]>;
  pushMany<T = unknown>(topic: Topic<T>, items: PushManyItem<NoInfer<T>>[]): Promise<KeyedPushResult[]> {
    return this.producer.pushMany(topic, items);
  }

  checkTopic(topic: string): Promise<void> {
    return this.producer.checkTopic(topic);
  }

  pushFlow<const F extends Flow>(flow: F & TypedFlow<F>): Promise<FlowResult> {
    return this.flows.pushFlow(flow);
  }

  getFlow(topic: string, id: string): Promise<FlowNode | null> {
    return this.flows.getFlow(topic, id);
  }

  stats(topic: string): Promise<QueueStats> {
    return this.inspection.stats(topic);
  }

  gauges(topic: string): Promise<QueueGauges> {
    return this.inspection.gauges(topic);
  }

  history(topic: string, options?: TopicHistoryOptions | null): Promise<TopicHistory> {
    return this.historyReads.history(topic, options);
  }

  deadLetters<T = unknown>(
    topic: Topic<T>,
    options?: { offset?: number; limit?: number } | null,
  ): Promise<DeadLetter<T>[]> {
    return this.inspection.deadLetters(topic, options);
  }

  requeueDead(topic: string, ids?: string[]): Promise<number> {
    return this.inspection.requeueDead(topic, ids);
  }

  purgeDead(topic: string, ids?: string[]): Promise<number> {
    return this.inspection.purgeDead(topic, ids);
  }

  async ping(timeoutMs?: number): Promise<number> {
    this.core.assertOpen('ping');
    return this.core.connection.ping(timeoutMs);
  }

  get<T = unknown>(topic: Topic<T>, id: string): Promise<MessageInfo<T> | null> {
    return this.lookup.get(topic, id);
  }

  list<T = unknown>(topic: Topic<T>, state: MessageState, options?: ListOptions | null): Promise<MessageInfo<T>[]> {
    return this.lookup.list(topic, state, options);
  }
  count(topic: string, state: MessageState, filter?: MessageFilter | null): Promise<number> {
    return this.lookup.count(topic, state, filter);
  }

  cancel(topic: string, id: string): Promise<MessageState | null> {
    return this.lookup.cancel(topic, id);
  }

  bulk(topic: string, options: BulkOptions): Promise<BulkStarted> {
    return this.bulks.bulk(topic, options);
  }

  bulkStatus(id: string): Promise<BulkStatus | null> {
    return this.bulks.bulkStatus(id);
  }

  abortBulk(id: string): Promise<boolean> {
    return this.bulks.abortBulk(id);
  }

  reencrypt(topic: string, options?: ReencryptOptions): Promise<BulkStarted> {
    return this.bulks.reencrypt(topic, options);
  }

  pause(topic: string): Promise<void> {
    return this.controls.pause(topic);
  }

  resume(topic: string): Promise<void> {
    return this.controls.resume(topic);
  }

  setLimits(topic: string, limits: TopicLimits | null): Promise<void> {
    return this.controls.setLimits(topic, limits);
  }

  limits(topic: string): Promise<TopicLimits> {
    return this.controls.limits(topic);
  }

  setGroupWeights(topic: string, weights: GroupWeights | null): Promise<void> {
    return this.controls.setGroupWeights(topic, weights);
  }

  groupWeights(topic: string): Promise<GroupWeights> {
    return this.controls.groupWeights(topic);
  }

  setScalingTarget(topic: string, target: ScalingTarget | null): Promise<void> {
    return this.scalingReads.setScalingTarget(topic, target);
  }

  scaling(topic: string): Promise<ScalingReport | null> {
    return this.scalingReads.scaling(topic);
  }

  setGroupQuotas(topic: string, quotas: GroupQuotas | null): Promise<void> {
    return this.quotas.setGroupQuotas(topic, quotas);
  }

  groupQuotas(topic: string): Promise<GroupQuotas> {
    return this.quotas.groupQuotas(topic);
  }

  groupUsage(topic: string, options?: GroupUsageOptions | null): Promise<GroupUsage> {
    return this.usage.groupUsage(topic, options);
  }

  upsertSchedule(topic: string, name: string, options: ScheduleOptions): Promise<ScheduleInfo> {
    return this.scheduling.upsertSchedule(topic, name, options);
  }

  declareSchedules(schedules: ScheduleDefinition[]): Promise<ScheduleInfo[]> {
    return this.declarations.declareSchedules(schedules);
  }

  removeSchedule(topic: string, name: string): Promise<boolean> {
    return this.scheduling.removeSchedule(topic, name);
  }

  runScheduleNow(topic: string, name: string): Promise<PushResult | null> {
    return this.scheduling.runScheduleNow(topic, name);
  }

  schedules(topic?: string): Promise<ScheduleInfo[]> {
    return this.scheduling.schedules(topic);
  }

  storedFormat(): Promise<RedisAckQueueStoredFormat> {
    return this.format.storedFormat();
  }

  setStoredFormat(format: RedisAckQueueStoredFormat): Promise<void> {
    return this.format.setStoredFormat(format);
  }

  topics(): Promise<string[]> {
    return this.registry.topics();
  }

  forgetTopic(topic: string): Promise<boolean> {
    return this.registry.forgetTopic(topic);
  }

  reserve<T = unknown>(topic: Topic<T>, options?: ReserveOptions | null): Promise<ReservedMessage<T>[]> {
    return this.leases.reserve(topic, options);
  }

  ack(message: ReservedMessage, result?: unknown): Promise<boolean> {
    return this.leases.ack(message, result);
  }

  nack(message: ReservedMessage, options?: NackOptions | null): Promise<NackResult> {
    return this.leases.nack(message, options);
  }

  extendLease(message: ReservedMessage, leaseMs: number): Promise<boolean> {
    return this.leases.extendLease(message, leaseMs);
  }

  release(message: ReservedMessage): Promise<boolean> {
    return this.leases.release(message);
  }

  consumerLiveness(): ConsumerLiveness[] {
    return this.consumers.liveness();
  }

  consume<T = unknown>(
    topic: Topic<T>,
    handler: QueueBatchHandlerFn<T>,
    options: QueueHandlerOptions & { batch: BatchOptions },
  ): QueueConsumer;
  consume<T = unknown>(
    topic: Topic<T>,
    handler: QueueHandlerFn<T>,
    options?: QueueHandlerOptions | null,
  ): QueueConsumer;
  consume<T = unknown>(
    topic: Topic<T>,
    handler: QueueHandlerFn<T> | QueueBatchHandlerFn<T>,
    options?: QueueHandlerOptions | null,
  ): QueueConsumer {
    this.core.assertOpen('consume');
    assertTopic(topic);
    const consumer = this.consumers.consume(topic, handler, optionsOf(options));
    this.scheduler.start();
    this.bulkRunner.start();
    // Registered in the background: a failure is retried by the next push, reserve or consume.
    this.core.engine.topics.note(topic)?.catch(() => undefined);
    return consumer;
  }

  async waitUntilIdle(topic: string, options?: { timeoutMs?: number } | null): Promise<void> {
    this.core.assertOpen('wait until idle');
    const timeoutMs = optionsOf(options).timeoutMs ?? 30_000;
    await this.core.events.untilIdle(topic, timeoutMs, () => this.stats(topic));
  }

  pushInTransaction<T = unknown>(
    tx: OutboxTransaction,
    topic: Topic<T>,
    payload: NoInfer<T>,
    options?: PushOptions | null,
  ): Promise<OutboxPushResult> {
    return this.outbox.pushInTransaction(tx, topic, payload, options);
  }

  pushManyInTransaction<T = unknown>(
    tx: OutboxTransaction,
    topic: Topic<T>,
    items: PushManyItem<NoInfer<T>>[],
  ): Promise<OutboxPushResult[]> {
    return this.outbox.pushManyInTransaction(tx, topic, items);
  }

  pushFlowInTransaction<const F extends Flow>(
    tx: OutboxTransaction,
    flow: F & TypedFlow<F>,
  ): Promise<OutboxFlowResult> {
    return this.outbox.pushFlowInTransaction(tx, flow);
  }

  outboxStatus(): Promise<OutboxStatus> {
    return this.outbox.outboxStatus();
  }

  outboxDead(options?: { limit?: number } | null): Promise<OutboxDeadRow[]> {
    return this.outbox.outboxDead(options);
  }

  requeueOutboxDead(rowIds?: string[]): Promise<number> {
    return this.outbox.requeueOutboxDead(rowIds);
  }

  purgeOutboxDead(rowIds?: string[]): Promise<number> {
    return this.outbox.purgeOutboxDead(rowIds);
  }

  /**
   * The events of every process of this prefix that runs with the `fleetEvents` option (this
   * one's too, when it does), read from the prefix's capped Redis Stream: type, topic, id,
   * attempt, dead reason, the server's time and the process; never payloads. Reading needs no
   * option: a monitoring process may only read. Each subscription reads with XREAD BLOCK on a
   * connection of its own; it ends when unsubscribed, and completes when the service closes.
   * @param options - `from`: `'now'` (default), `'start'`, or a `streamId` to read on after it.
   * @throws {QueueClosedError} once the service is closing.
   * @throws {InvalidOptionError} when `from` is none of those.
   * @example
   * ```ts
   * queue.fleetEvents$().pipe(filter((e) => e.type === 'dead')).subscribe((e) => alert(`${e.topic} ${e.id}: ${e.reason}`));
   * ```
   */
  fleetEvents$(options?: RedisAckQueueFleetEventsOptions | null): Observable<RedisAckQueueFleetEvent> {
    this.core.assertOpen('read fleet events');
    return this.fleet.watch(optionsOf(options));
  }

  close(drainMs = this.core.settings.drainMs): Promise<void> {
    this.closing ??= (async () => {
      this.core.refuseCalls();
      // The relay stops before Redis closes: its batch under way ends (what it pushed is deleted, the rest kept).
      await this.outbox.close();
      await this.scheduler.stop();
      await this.bulkRunner.stop();
      await this.consumers.closeAll(drainMs);
      // What this process counted since the last second, bounded like any call to Redis.
      const { history, settings } = this.core;
      if (history) await settleWithin(history.close(), settings.commandTimeoutMs);
      // The events of the drain included; fleet readers complete.
      await settleWithin(this.fleet.close(), settings.commandTimeoutMs);
      this.core.events.complete();
      await this.core.connection.close();
    })();
    return this.closing;
  }

  /** Nest calls this last on shutdown: consumers have drained, connections close now. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }
}
