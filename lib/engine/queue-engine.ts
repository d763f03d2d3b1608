import { InvalidOptionError } from '../errors';
import { errorText } from '../errors/error-text';
import type { DeadLetterReason, NackResult } from '../interfaces';
import { LIMITS } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type {
  CompletedLease,
  CompletedPolicy,
  ConsumerEngine,
  DeferResult,
  HeldLease,
  ReserveRequest,
  ReserveResult,
  SettleAction,
  StepStoreResult,
} from './consumer-engine';
import type { QueueLogger } from '../observability/queue-logger';
import { CancelSignals } from './redis/cancel-signals';
import { DataMarker } from './stores/data-marker';
import { StoredFormat } from './stores/stored-format';
import { openBlockingConnection, type RedisClient } from './redis/connection';
import { FlowTrees, type DeadParentsListener } from './stores/flow-trees';
import { GroupQuotasStore } from './stores/group-quotas';
import { GroupWeightsStore } from './stores/group-weights';
import { HistoryStore } from './stores/history-store';
import { JobRecords } from './stores/job-records';
import { ReplyInbox, type ReplyNotices } from './redis/reply-inbox';
import { RequestReplies } from './stores/request-replies';
import { LeaseSettler } from './stores/lease-settler';
import { MessageFilters } from './stores/message-filters';
import { MessageLookup } from './stores/message-lookup';
import { MessageWriter } from './stores/message-writer';
import { QueueInspector } from './stores/queue-inspector';
import { FlowRequeue } from './stores/flow-requeue';
import { FleetEventStream } from './stores/fleet-event-stream';
import { BulkStore } from './stores/bulk-store';
import { idPrefixCounterKey, prefixInKeys } from './keys/queue-keys';
import { sendCommand } from './redis/redis-command';
import { release01UnescapedKeys } from './keys/release-0.1';
import { RelayReceipts } from './stores/relay-receipts';
import { ReplicatedPushes } from './stores/replicated-pushes';
import { ScalingStore } from './stores/scaling-store';
import { ScheduleStore } from './stores/schedule-store';
import { ScriptRunner } from './scripts/script-runner';
import { TopicLimitsStore } from './stores/topic-limits';
import { TopicPauses } from './stores/topic-pauses';
import { TopicRegistry } from './stores/topic-registry';
import { BlockingWakeSignal } from './redis/wake-signal';
import { byPartition, partitionOfMessage, TopicLayouts } from './scripts/topic-layouts';
import {
  decodeReserveReply,
  type EncodedPush,
  type ExpiredMessage,
  type KeyedReply,
  type Lease,
} from './codecs/wire-format';

/** What the engine needs to know of the settings. */
export interface EngineConfig {
  prefix: string;
  /** Partition count of every topic that has more than one. */
  partitions: ReadonlyMap<string, number>;
  replicatedPushes: { replicas: number; timeoutMs: number } | undefined;
  deadMaxCount: number;
  deadMaxAgeMs: number;
  /** Largest payload, and child result handed to a flow's parent (JSON bytes). */
  maxPayloadBytes: number;
  /** The attempts a message has when it names none (what a look-up reports). */
  maxAttempts: number;
  /** How each topic keeps completed messages; undefined where it keeps none. */
  keepCompleted(topic: string): CompletedPolicy | undefined;
}

const NACK_RESULTS: NackResult[] = ['lost', 'retry', 'dead'];

/**
 * The one gate to Redis for the layers above: every store over the service's connection is
 * built here, once, on one script runner and one set of topic layouts, and nothing outside
 * engine/ builds one. The consumers' hot path (reserve, settle, nack, defer, complete,
 * progress: the ConsumerEngine seam) is a method here; the rarer operations are the stores
 * below (lookup, inspector, pauses, limits, group weights, history, schedules, topics). It has no "closed" guard and
 * emits no events: the service and the consumers decide what is allowed and what is
 * reported, so a shutdown can always hand its messages back.
 */
export class QueueEngine implements ConsumerEngine {
  private readonly scripts: ScriptRunner;
  private readonly layouts: TopicLayouts;
  /** get, list and cancel by id. */
  readonly lookup: MessageLookup;
  /** count, and list by a filter (tag, push time, error text). */
  readonly filters: MessageFilters;
  /** stats, gauges and the dead letters. */
  readonly inspector: QueueInspector;
  readonly pauses: TopicPauses;
  readonly limits: TopicLimitsStore;
  readonly groupWeights: GroupWeightsStore;
  readonly groupQuotas: GroupQuotasStore;
  /** Each topic's per-minute history. */
  readonly history: HistoryStore;
  /** Each topic's scaling target and signal. */
  readonly scaling: ScalingStore;
  readonly replies: RequestReplies;
  /**
   * Flows: parents that wait for their children, across slots. The ends of their children are
   * passed on here, by the scripts' callers: no layer above handles a flow's links.
   */
  readonly flows: FlowTrees;
  readonly schedules: ScheduleStore;
  readonly topics: TopicRegistry;
  /** Tells when Redis lost this prefix's data. */
  readonly marker: DataMarker;
  /** The prefix's capped stream of every process's events (`fleetEvents`). */
  readonly fleetEvents: FleetEventStream;
  /** The form push stores plain messages in. */
  readonly format: StoredFormat;
  /** Bulk actions by filter: their selection, records, steps and index. */
  readonly bulks: BulkStore;
  private readonly writer: MessageWriter;
  /** The outbox relay's receipts (see RelayReceipts). */
  readonly receipts: RelayReceipts;
  private readonly settler: LeaseSettler;
  private readonly records: JobRecords;

  constructor(
    private readonly client: RedisClient,
    private readonly config: EngineConfig,
    logger: QueueLogger,
  ) {
    this.scripts = new ScriptRunner(client);
    // Every key below is built from the prefix as keys spell it (escaped when it holds ':').
    const prefix = prefixInKeys(config.prefix);
    this.layouts = new TopicLayouts(client, prefix, config.partitions);
    const { replicatedPushes: replicated } = config;
    const replicatedPushes = replicated && new ReplicatedPushes(client, replicated.replicas, replicated.timeoutMs);
    this.format = new StoredFormat(client, prefix);
    this.writer = new MessageWriter(this.scripts, this.layouts, replicatedPushes, this.format);
    const dead = { maxCount: config.deadMaxCount, maxAgeMs: config.deadMaxAgeMs };
    this.receipts = new RelayReceipts(this.scripts, this.layouts);
    this.flows = new FlowTrees(this.scripts, this.layouts, this.writer, dead, config.maxPayloadBytes, this.receipts);
    this.settler = new LeaseSettler(this.scripts, this.layouts, this.flows);
    const policyOf = (topic: string) => config.keepCompleted(topic);
    this.records = new JobRecords(this.scripts, this.layouts, this.settler, policyOf, this.flows);
    this.lookup = new MessageLookup(this.scripts, this.layouts, config.maxAttempts, this.flows);
    this.filters = new MessageFilters(this.scripts, this.layouts, config.maxAttempts);
    this.pauses = new TopicPauses(this.scripts, this.layouts);
    this.limits = new TopicLimitsStore(this.scripts, this.layouts);
    this.groupWeights = new GroupWeightsStore(this.scripts, this.layouts);
    this.groupQuotas = new GroupQuotasStore(this.scripts, this.layouts);
    this.history = new HistoryStore(this.scripts, this.layouts);
    this.scaling = new ScalingStore(this.scripts, this.layouts);
    this.replies = new RequestReplies(client, this.scripts, this.layouts);
    this.schedules = new ScheduleStore(client, this.scripts, this.layouts, prefix);
    this.topics = new TopicRegistry(this.scripts, prefix, logger);
    this.marker = new DataMarker(client, prefix);
    this.fleetEvents = new FleetEventStream(client, prefix);
    const requeue = new FlowRequeue(this.scripts, this.layouts, this.flows);
    this.inspector = new QueueInspector(this.scripts, this.layouts, requeue);
    this.bulks = new BulkStore(client, this.scripts, this.layouts, prefix, {
      flows: this.flows,
      requeue,
      lookup: this.lookup,
      compact: () => this.format.compact,
    });
  }

  /**
   * The one listener of the flow parents that went to the dead letters as child-failed when
   * they heard of a child's end (a `dead` event each): called by whichever call of this engine
   * passed that end on, before it resolves, and by the flows' sweep.
   */
  onParentsDead(listener: DeadParentsListener): void {
    this.flows.onParentsDead(listener);
  }

  /**
   * After Redis lost this prefix's data: partition counts are checked (and recorded) again on
   * each topic's next use, and the topics this service recorded are recorded again now.
   * Resolves with how many topics.
   */
  recordAgain(): Promise<number> {
    this.layouts.forgetChecks();
    return this.topics.recordAgain();
  }

  /**
   * A number no other service of this prefix was given (INCR of the prefix's id counter): what
   * starts the ids this service makes. A resend after a dropped connection only skips a number.
   */
  issueIdPrefix(): Promise<number> {
    const key = idPrefixCounterKey(prefixInKeys(this.config.prefix));
    return sendCommand(this.client, 'push', undefined, () => this.client.incr(key));
  }

  /**
   * Whether Redis holds this prefix's topic registry or schedule index in the layout before
   * prefixes with ':' were escaped (their messages are then out of this version's sight).
   * Read-only; false for a prefix without ':' and when Redis does not tell (an ACL for the new layout).
   */
  async unescapedLayoutFound(): Promise<boolean> {
    const keys = release01UnescapedKeys(this.config.prefix);
    if (keys.length === 0) return false;
    return sendCommand(this.client, 'connect', undefined, () => this.client.exists(...keys)).then(
      (count) => count > 0,
      () => false,
    );
  }

  /** A consumer's blocking wait for pushes to `topic`, on a connection of its own. */
  wakeSignal(topic: string): BlockingWakeSignal {
    const blocking = openBlockingConnection(this.client, `ackq:${topic}`);
    return new BlockingWakeSignal(blocking, this.layouts.get(topic).home.wake);
  }

  /** The cancel notices of every topic, on one pub/sub connection opened by the first listener. */
  cancelSignals(): CancelSignals {
    return new CancelSignals(this.client, (topic) => this.layouts.get(topic).partitions.map((k) => k.cancelled));
  }

  /** A caller's channel for the replies of its requests, on a pub/sub connection of its own. */
  replyInbox(channel: string, inlineChannel: string, notices: ReplyNotices): ReplyInbox {
    return new ReplyInbox(this.client, channel, inlineChannel, notices);
  }

  /** Checks that the topic's keys in Redis have the layout this service is configured with (partition count). */
  checkTopic(topic: string): Promise<void> {
    return this.layouts.verify(this.layouts.get(topic), 'check a topic');
  }

  /**
   * Date.now() when Redis last answered a script of `topic` (a reserve, ack, nack, extension, push…),
   * noted where scripts run: a consumer's health check reads it. Undefined before the first answer.
   */
  lastAnswerAt(topic: string): number | undefined {
    return this.scripts.lastAnswerAt(topic);
  }

  partitionCount(topic: string): number {
    return this.layouts.get(topic).partitions.length;
  }

  /** Stores messages (in one round trip per partition); one flag per item: true stored, false duplicate. */
  push(topic: string, items: EncodedPush[]): Promise<boolean[]> {
    return this.writer.push(topic, items);
  }

  /**
   * As push, with push.lua's code per item: 1 stored, 0 duplicate, 3 a flow node's id taken
   * outside its flow, PUSH_RELAYED its relay receipt held (nothing done).
   */
  pushCodes(topic: string, items: EncodedPush[]): Promise<number[]> {
    return this.writer.pushCodes(topic, items);
  }

  /**
   * The partition a pushed item went to (where its relay receipt is): its group's, else its id's
   * (a keyed push's id was routed to its key's partition by its push).
   */
  partitionOfPush(topic: string, item: { id: string; group?: string }): number {
    return partitionOfMessage(this.layouts.get(topic), item);
  }

  /** Pushes with a key mode (push-keyed.lua): what each did, in order. */
  pushKeyed(topic: string, items: EncodedPush[]): Promise<KeyedReply[]> {
    return this.writer.pushKeyed(topic, items);
  }

  async reserve<T>(
    topic: string,
    partition: number,
    request: ReserveRequest,
    acks: HeldLease[],
  ): Promise<ReserveResult<T>> {
    if (acks.length > LIMITS.idsPerCall)
      throw new InvalidOptionError('acks', acks.length, `at most ${LIMITS.idsPerCall} leases`);
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, 'reserve');
    const keys = layout.partitions[partition];
    const { count, leaseMs, maxAttempts } = request;
    const args: (string | number)[] = [
      count,
      leaseMs,
      maxAttempts,
      LIMITS.maxMovesPerReserve,
      this.config.deadMaxCount,
      this.config.deadMaxAgeMs,
      // Compact: no release before 0.2 runs, which would count the encoding anchor as a lease.
      this.format.compact ? 1 : 0,
    ];
    for (const lease of acks) args.push(lease.id, lease.token);
    const mark = this.scripts.mark;
    const reply = decodeReserveReply<T>(
      topic,
      await this.scripts.run<unknown[]>('reserve', topic, keys, args, request.afterWait ?? false),
      maxAttempts,
    );
    this.settler.serverOffsetMs = reply.serverNow - Date.now();
    // Its acks' and deaths' flow children are passed on; the flow parents it leased carry their children.
    await this.flows.passOn(topic, partition, reply.flowEnded);
    if (reply.flowParents.length > 0) this.flows.carry(reply.messages, reply.flowParents);
    const acked = this.settler.ackFlags(acks, reply.ackFlags, mark);
    const flags =
      reply.unreadable.length > 0
        ? await this.bury(topic, reply.unreadable, 'malformed', MESSAGES.malformedBody, maxAttempts)
        : [];
    const buried = reply.unreadable.filter((_, i) => flags[i]).map(({ id, attempt }) => ({ id, attempt }));
    // A full batch may leave more behind: let the other consumers, waiting in the home slot,
    // help. At most every 50 ms: one wake is enough for a consumer to try every partition.
    if (layout.partitions.length > 1 && reply.messages.length === count && Date.now() - layout.helpWokenAt > 50) {
      layout.helpWokenAt = Date.now();
      this.scripts.wakeHome(layout).catch(() => undefined);
    }
    const { messages, nextDueInMs, paused, rateLimited, deadInRedis, flowRepair, expired } = reply;
    return { messages, nextDueInMs, paused, rateLimited, acked, buried, deadInRedis, flowRepair, expired };
  }

  /** Reserves from the partitions in turn (each call starts at the next); the first that has messages answers. */
  async reserveAny<T>(topic: string, request: ReserveRequest): Promise<Omit<ReserveResult<T>, 'acked'>> {
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'reserve');
    const buried: ReserveResult<T>['buried'] = [];
    const expired: ExpiredMessage[] = [];
    let deadInRedis = 0;
    for (let tried = 0; tried < layout.partitions.length; tried++) {
      layout.cursor = (layout.cursor + 1) % layout.partitions.length;
      const batch = await this.reserve<T>(topic, layout.cursor, request, []);
      buried.push(...batch.buried);
      expired.push(...(batch.expired ?? []));
      deadInRedis += batch.deadInRedis;
      if (batch.messages.length > 0) return { ...batch, buried, deadInRedis, expired };
    }
    return { messages: [], nextDueInMs: -1, paused: false, rateLimited: false, buried, deadInRedis, expired };
  }

  /**
   * Sends leased messages straight to the dead letters with `reason`, each while its lease holds;
   * one flag per lease. `maxAttempts`, the deliveries that were allowed, is kept with each.
   */
  async bury(
    topic: string,
    leases: Lease[],
    reason: DeadLetterReason,
    error: unknown,
    maxAttempts?: number,
  ): Promise<boolean[]> {
    const layout = this.layouts.get(topic);
    const flags: boolean[] = [];
    const head = [reason, errorText(error), this.config.deadMaxCount, this.config.deadMaxAgeMs, maxAttempts ?? ''];
    for (const [partition, positions] of byPartition(layout, leases)) {
      const pairs = positions.flatMap((i) => [leases[i].id, leases[i].token]);
      const reply = await this.scripts.run<number[]>('bury', topic, layout.partitions[partition], [...head, ...pairs]);
      positions.forEach((position, k) => (flags[position] = reply[k] === 1));
      // Then the outbox entries it wrote: the dead children's parents hear it.
      await this.flows.passOn(topic, partition, reply[positions.length] as unknown as string[]);
    }
    // A grouped message's death frees its group for the next (woken in its partition only).
    if (leases.some((lease) => lease.group)) await this.scripts.wakeHome(layout);
    return flags;
  }

  /** Acks, extends or releases leases (see LeaseSettler); one flag per lease, true where it was still held. */
  settle(action: SettleAction, topic: string, leases: HeldLease[], leaseMs = 0): Promise<boolean[]> {
    return this.settler.settle(action, topic, leases, leaseMs);
  }

  async nack(
    topic: string,
    lease: HeldLease,
    failure: { delayMs: number; maxAttempts: number; error: unknown },
  ): Promise<NackResult> {
    const layout = this.layouts.get(topic);
    const partition = partitionOfMessage(layout, lease);
    const { deadMaxCount, deadMaxAgeMs } = this.config;
    const args = [
      lease.id,
      lease.token,
      Math.ceil(failure.delayMs),
      failure.maxAttempts,
      errorText(failure.error),
      deadMaxCount,
      deadMaxAgeMs,
    ];
    const reply = await this.scripts.run<number | [number, string[]]>(
      'nack',
      topic,
      layout.partitions[partition],
      args,
    );
    // Dead, with the outbox entry it wrote: a flow's child's parent hears it.
    if (Array.isArray(reply)) await this.flows.passOn(topic, partition, reply[1]);
    const result = NACK_RESULTS[Array.isArray(reply) ? reply[0] : reply];
    // A retry is ready for someone; a grouped message's death frees its group for the next.
    if (result === 'retry' || lease.group) await this.scripts.wakeHome(layout);
    return result;
  }

  /** See JobRecords.defer. */
  defer(topic: string, lease: HeldLease, delayMs: number, maxDeferrals: number, hold?: boolean): Promise<DeferResult> {
    return this.records.defer(topic, lease, delayMs, maxDeferrals, hold);
  }

  completedPolicy(topic: string): CompletedPolicy | undefined {
    return this.config.keepCompleted(topic);
  }

  complete(topic: string, leases: CompletedLease[]): Promise<boolean[]> {
    return this.records.complete(topic, leases);
  }

  progress(topic: string, lease: HeldLease, json: string): Promise<boolean> {
    return this.records.progress(topic, lease, json);
  }

  readSteps(topic: string, lease: HeldLease): Promise<Map<string, string> | undefined> {
    return this.records.readSteps(topic, lease);
  }

  storeStep(topic: string, lease: HeldLease, name: string, json: string): Promise<StepStoreResult> {
    return this.records.storeStep(topic, lease, name, json);
  }
}
