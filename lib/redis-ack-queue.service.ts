import { randomBytes } from 'node:crypto';
import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Observable, Subject } from 'rxjs';
import { QueuePoller } from './consumer/queue-poller';
import { IdleTimeoutError, InvalidOptionError, QueueClosedError } from './errors';
import { asError, errorText } from './errors/error-text';
import { mapRedisError } from './errors/map-redis-error';
import type {
  DeadLetter,
  NackOptions,
  NackResult,
  PushManyItem,
  PushOptions,
  PushResult,
  QueueConsumer,
  QueueHandlerFn,
  QueueHandlerOptions,
  QueueStats,
  RedisAckQueueEvent,
  RedisAckQueueOptions,
  ReserveOptions,
  ReservedMessage,
} from './interfaces';
import { decodeDeadLetters, decodeReserved, encodeBody } from './queue/message-codec';
import { resolveConsumerSettings, resolveServiceSettings, type ServiceSettings } from './queue/settings';
import {
  assertDuration,
  assertHeaders,
  assertInteger,
  assertMessageId,
  assertOptionalInteger,
  assertTopic,
  toEpochMs,
} from './queue/validation';
import { DEFAULTS, LIMITS } from './redis-ack-queue.constants';
import { MESSAGES } from './redis-ack-queue.messages';
import { partitionOf } from './redis/partitions';
import type { QueueKeys } from './redis/queue-keys';
import { defineQueueScripts, runQueueScript, type QueueScriptName } from './redis/queue-scripts';
import { ReplicatedPushes } from './redis/replicated-pushes';
import { byPartition, TopicLayouts, type TopicLayout } from './redis/topic-layouts';
import { preflight } from './redis/preflight';
import {
  describeTarget,
  openBlockingConnection,
  openConnection,
  waitUntilReady,
  type RedisClient,
} from './redis/redis-connection';

/** A reserved batch plus when the next delayed message or lease deadline falls due. */
export interface ReservedBatch<T> {
  messages: ReservedMessage<T>[];
  /** Ms from now until something becomes ready without a push; -1 when nothing is scheduled. */
  nextDueInMs: number;
  /** One flag per lease given to ack in the same call: true acked, false lost. */
  acked: boolean[];
}

type Lease = Pick<ReservedMessage, 'id' | 'token'> & { attempt?: number; leaseDeadline?: number };

const NACK_RESULTS: NackResult[] = ['lost', 'retry', 'dead'];

/**
 * The queue engine: push, reserve, ack, nack, inspect. Every state change is one Lua
 * script, timed by the Redis server's clock. Usable with `new` outside Nest; the module
 * provides the same class through dependency injection.
 */
export class RedisAckQueueService implements OnApplicationShutdown {
  /** Queue events (pushed, reserved, acked, retried, dead, lease-lost, error); never payloads. */
  readonly events$: Observable<RedisAckQueueEvent>;

  private readonly logger = new Logger('RedisAckQueue');
  private readonly settings: ServiceSettings;
  private readonly client: RedisClient;
  private readonly ownsClient: boolean;
  private readonly layouts: TopicLayouts;
  private readonly replicated: ReplicatedPushes | undefined;
  private readonly events = new Subject<RedisAckQueueEvent>();
  private readonly consumers = new Set<QueuePoller<unknown>>();
  private readonly idPrefix = randomBytes(9).toString('base64url');
  private idCounter = 0;
  /** Redis server time minus local time, as of the last reserve. */
  private serverOffsetMs = 0;
  private closing: Promise<void> | undefined;

  constructor(options: RedisAckQueueOptions = {}) {
    this.settings = resolveServiceSettings(options);
    const { client, owned } = openConnection(options.connection ?? DEFAULTS.connection);
    this.client = client;
    this.ownsClient = owned;
    if (owned) this.reportConnectionErrors(client);
    defineQueueScripts(client);
    this.layouts = new TopicLayouts(client, this.settings.prefix, this.settings.partitions);
    const { replicatedPushes } = this.settings;
    if (replicatedPushes) this.replicated = new ReplicatedPushes(client, replicatedPushes.replicas, replicatedPushes.timeoutMs);
    this.events$ = this.events.asObservable();
  }

  /** Waits until Redis answers (7.0 or newer); fails within connectTimeoutMs otherwise. */
  async connect(): Promise<void> {
    try {
      await waitUntilReady(this.client, this.settings.connectTimeoutMs);
      await preflight(this.client, this.settings.allowEviction, this.logger);
    } catch (error) {
      if (this.ownsClient) this.client.disconnect();
      throw mapRedisError(error, 'connect');
    }
  }

  /**
   * One warning per outage instead of ioredis' "unhandled error event" on every retry;
   * calls fail with typed errors meanwhile, and consumers pause and resume by themselves.
   */
  private reportConnectionErrors(client: RedisClient): void {
    let down = false;
    client.on('error', (error: Error) => {
      if (down || this.closing) return;
      down = true;
      this.logger.warn(MESSAGES.connectionLost(describeTarget(client), error.message));
    });
    client.on('ready', () => {
      if (down && !this.closing) this.logger.log(MESSAGES.connectionRestored(describeTarget(client)));
      down = false;
    });
  }

  /** Stores one message; resolves once Redis has it. */
  async push<T>(topic: string, payload: T, options: PushOptions = {}): Promise<PushResult> {
    const [result] = await this.pushMany(topic, [{ ...options, payload }]);
    return result;
  }

  /**
   * Stores many messages in one round trip. Every item is checked first: one bad item
   * rejects the whole call before Redis is touched.
   */
  async pushMany<T>(topic: string, items: PushManyItem<T>[]): Promise<PushResult[]> {
    this.assertOpen('push');
    assertTopic(topic);
    if (!Array.isArray(items)) throw new InvalidOptionError('items', items, 'an array of { payload, ...options }');
    const layout = this.layouts.get(topic);
    const count = layout.partitions.length;
    const ids: string[] = [];
    // Per partition: the items' positions in `ids` and their script arguments.
    const groups = new Map<number, { at: number[]; args: (string | number)[] }>();
    for (const item of items) {
      const encoded = this.encodeItem(topic, item);
      const partition = partitionOf(encoded[0], count);
      let group = groups.get(partition);
      if (!group) groups.set(partition, (group = { at: [], args: [] }));
      group.at.push(ids.length);
      group.args.push(...encoded);
      ids.push(encoded[0]);
    }
    if (!layout.verified) await this.layouts.verify(layout, 'push');
    const stored: number[] = [];
    let woke = false;
    await Promise.all(
      [...groups].map(async ([partition, { at, args }]) => {
        const flags = await this.pushToPartition(layout, partition, args, at.map((i) => ids[i]));
        at.forEach((position, i) => (stored[position] = flags[i]));
        woke ||= flags[at.length] === 1;
      }),
    );
    if (woke && count > 1) await this.wakeHome(layout);
    return ids.map((id, i) => {
      const duplicate = stored[i] === 0;
      if (!duplicate) this.emit({ type: 'pushed', topic, id });
      return { id, duplicate };
    });
  }

  /**
   * One push script call per 500 items, sent at once (with replicatedPushes, confirmed by
   * replicas first). Returns a flag per item (1 stored, 0 duplicate), then 1 if consumers
   * were woken.
   */
  private async pushToPartition(layout: TopicLayout, partition: number, args: (string | number)[], ids: string[]) {
    const keys = layout.partitions[partition];
    const width = LIMITS.pushChunk * 4;
    const chunks: (string | number)[][] = [];
    for (let i = 0; i < args.length; i += width) chunks.push(args.slice(i, i + width));
    const replies = this.replicated
      ? await this.replicated.push(layout.name, keys, chunks, ids)
      : await Promise.all(chunks.map((chunk) => this.run<number[]>('push', layout.name, keys, chunk)));
    return [...replies.flatMap((reply) => reply.slice(0, -1)), Math.max(...replies.map((reply) => reply.at(-1)!))];
  }

  /** Leases up to `count` messages; an empty array when none is ready. */
  async reserve<T = unknown>(topic: string, options: ReserveOptions = {}): Promise<ReservedMessage<T>[]> {
    return (await this.reserveBatch<T>(topic, options)).messages;
  }

  /** `reserve` plus the wait until the next scheduled message. */
  async reserveBatch<T>(topic: string, options: ReserveOptions = {}): Promise<ReservedBatch<T>> {
    this.assertOpen('reserve');
    assertTopic(topic);
    const { count = 1, leaseMs = this.settings.leaseMs, maxAttempts = this.settings.maxAttempts } = options;
    assertInteger('count', count, 1, LIMITS.maxReserveCount);
    assertInteger('leaseMs', leaseMs, 10, 2 ** 31 - 1);
    assertInteger('maxAttempts', maxAttempts, 1, 1_000_000);
    const layout = this.layouts.get(topic);
    await this.layouts.verify(layout, 'reserve');
    // Partitions take turns; the first that has messages answers.
    let nextDueInMs = -1;
    for (let tried = 0; tried < layout.partitions.length; tried++) {
      layout.cursor = (layout.cursor + 1) % layout.partitions.length;
      const batch = await this.reservePartition<T>(topic, layout.cursor, { count, leaseMs, maxAttempts });
      nextDueInMs = earliestDue(nextDueInMs, batch.nextDueInMs);
      if (batch.messages.length > 0) return { messages: batch.messages, nextDueInMs, acked: [] };
    }
    return { messages: [], nextDueInMs, acked: [] };
  }

  /**
   * Checks that Redis holds `topic` with this process' partition count (recording it for a
   * partitioned topic); rejects with PartitionCountMismatchError otherwise. Push and reserve
   * check on their first call anyway; the module checks every handler's topic at startup.
   */
  async checkTopic(topic: string): Promise<void> {
    this.assertOpen('check a topic');
    assertTopic(topic);
    await this.layouts.verify(this.layouts.get(topic), 'check a topic');
  }

  /** How many partitions `topic` has here (1 unless the topics option says more). */
  partitionCount(topic: string): number {
    return this.layouts.get(topic).partitions.length;
  }

  /**
   * `reserveBatch` on one partition, options already checked: what a poller calls. It may
   * ack up to 500 leases of that partition in the same script call (`acks`, unchecked: the
   * poller's own leases), so a consumer's steady state is one call per batch.
   * @internal
   */
  async reservePartition<T>(
    topic: string,
    partition: number,
    options: Required<ReserveOptions>,
    acks: Lease[] = [],
  ): Promise<ReservedBatch<T>> {
    const { count, leaseMs, maxAttempts } = options;
    const layout = this.layouts.get(topic);
    if (!layout.verified) await this.layouts.verify(layout, 'reserve');
    const keys = layout.partitions[partition];
    if (acks.length > LIMITS.idsPerCall) throw new InvalidOptionError('acks', acks.length, `at most ${LIMITS.idsPerCall} leases`);
    const args: (string | number)[] = [
      count,
      leaseMs,
      maxAttempts,
      LIMITS.maxMovesPerReserve,
      this.settings.deadMaxCount,
      this.settings.deadMaxAgeMs,
    ];
    for (const lease of acks) args.push(lease.id, lease.token);
    const reply = await this.run<(string | number)[]>('reserve', topic, keys, args);
    this.serverOffsetMs = Number(reply[0]) - Date.now();
    const deadline = Number(reply[2]);
    const ackCount = Number(reply[3]);
    const acked = this.ackFlags(topic, acks, reply as number[], 4, ackCount);
    const messages: ReservedMessage<T>[] = [];
    const unreadable: { id: string; token: string; attempt: number }[] = [];
    const observed = this.events.observed;
    for (let i = 4 + ackCount; i < reply.length; i += 2) {
      const id = String(reply[i]);
      // '<sequence>.<attempt> <body>'
      const leased = String(reply[i + 1]);
      const space = leased.indexOf(' ');
      const token = leased.slice(0, space);
      const attempt = Number(token.slice(token.indexOf('.') + 1));
      try {
        messages.push(decodeReserved<T>(topic, id, leased.slice(space + 1), attempt, token, deadline, maxAttempts));
        if (observed) this.emit({ type: 'reserved', topic, id, attempt });
      } catch {
        // Redis' cjson accepted it (NaN, hex numbers...), JSON.parse does not.
        unreadable.push({ id, token, attempt });
      }
    }
    if (unreadable.length > 0) await this.buryUnreadable(topic, keys, unreadable);
    // A full batch may leave more behind: let the other consumers, waiting in the home slot,
    // help. At most every 50 ms: one wake is enough for a consumer to try every partition.
    if (layout.partitions.length > 1 && messages.length === count && Date.now() - layout.helpWokenAt > 50) {
      layout.helpWokenAt = Date.now();
      this.wakeHome(layout).catch(() => undefined);
    }
    return { messages, nextDueInMs: Number(reply[1]), acked };
  }

  private async buryUnreadable(topic: string, keys: QueueKeys, leases: { id: string; token: string; attempt: number }[]) {
    const { deadMaxCount, deadMaxAgeMs } = this.settings;
    const args: (string | number)[] = ['malformed', 'the stored body is not valid JSON', deadMaxCount, deadMaxAgeMs];
    for (const { id, token } of leases) args.push(id, token);
    const flags = await this.run<number[]>('bury', topic, keys, args);
    leases.forEach(({ id, attempt }, i) => flags[i] === 1 && this.emit({ type: 'dead', topic, id, attempt }));
  }

  /** Removes a message for good; false when the lease was no longer this one (nothing changed). */
  async ack(message: ReservedMessage): Promise<boolean> {
    const [acked] = await this.ackMany(message.topic, [message]);
    return acked;
  }

  /** Acks many leased messages of one topic in one script call. */
  ackMany(topic: string, messages: Pick<ReservedMessage, 'id' | 'token' | 'attempt'>[]): Promise<boolean[]> {
    this.assertLeases('ack', topic, messages);
    return this.settleLeases('ack', topic, messages);
  }

  /**
   * Ends a lease after a failure: back to delayed (after the backoff or `delayMs`) while
   * attempts remain, else to dead letters with the error. `lost` when the lease was stale.
   */
  async nack(message: ReservedMessage, options: NackOptions = {}): Promise<NackResult> {
    const { topic } = message;
    this.assertLease(topic, message);
    const delayMs = options.delayMs ?? this.settings.backoff(message.attempt, options.error);
    assertDuration('delayMs', delayMs);
    const maxAttempts = message.maxAttempts ?? this.settings.maxAttempts;
    assertInteger('maxAttempts', maxAttempts, 1, 1_000_000);
    const layout = this.layouts.get(topic);
    const keys = layout.partitions[partitionOf(message.id, layout.partitions.length)];
    const code = await this.run<number>('nack', topic, keys, [
      message.id,
      message.token,
      Math.ceil(delayMs),
      maxAttempts,
      errorText(options.error),
      this.settings.deadMaxCount,
      this.settings.deadMaxAgeMs,
    ]);
    const result = NACK_RESULTS[code];
    if (result === 'retry' && layout.partitions.length > 1) await this.wakeHome(layout);
    const error = options.error === undefined ? undefined : asError(options.error);
    if (result === 'retry') this.emit({ type: 'retried', topic, id: message.id, attempt: message.attempt, error });
    if (result === 'dead') this.emit({ type: 'dead', topic, id: message.id, attempt: message.attempt, error });
    return result;
  }

  /** Moves the lease deadline to now + leaseMs; false when the lease was already lost. */
  async extendLease(message: ReservedMessage, leaseMs: number): Promise<boolean> {
    assertInteger('leaseMs', leaseMs, 10, 2 ** 31 - 1);
    this.assertLeases('extend', message.topic, [message]);
    // settleLeases keeps the new deadline (the server's clock, like every deadline) on the message.
    const [extended] = await this.settleLeases('extend', message.topic, [message], leaseMs);
    return extended;
  }

  /** Extends many leases of one topic in one script call (a poller's heartbeat). */
  async extendLeases(topic: string, messages: Pick<ReservedMessage, 'id' | 'token'>[], leaseMs: number): Promise<boolean[]> {
    assertInteger('leaseMs', leaseMs, 10, 2 ** 31 - 1);
    this.assertLeases('extend', topic, messages);
    return this.settleLeases('extend', topic, messages, leaseMs);
  }

  /** Hands leases back to the head of ready at once, not counting the interrupted attempt. */
  async release(topic: string, messages: Pick<ReservedMessage, 'id' | 'token'>[]): Promise<boolean[]> {
    this.assertLeases('release', topic, messages);
    const flags = await this.settleLeases('release', topic, messages);
    const layout = this.layouts.get(topic);
    if (layout.partitions.length > 1 && flags.includes(true)) await this.wakeHome(layout);
    return flags;
  }

  /**
   * Acks, extends or releases leases of one topic, at most 500 per script call (per
   * partition), all sent at once. No argument checks: the public callers and the poller
   * (whose leases came from reserve) have made them.
   * @internal
   */
  async settleLeases(name: 'ack' | 'extend' | 'release', topic: string, messages: Lease[], leaseMs = 0): Promise<boolean[]> {
    const layout = this.layouts.get(topic);
    const calls: Promise<void>[] = [];
    const flags: boolean[] = new Array(messages.length);
    for (const [partition, positions] of byPartition(layout, messages)) {
      for (let start = 0; start < positions.length; start += LIMITS.idsPerCall) {
        const batch = positions.slice(start, start + LIMITS.idsPerCall);
        const leases = batch.map((i) => messages[i]);
        const args: (string | number)[] = name === 'extend' ? [leaseMs] : [];
        for (const lease of leases) args.push(lease.id, lease.token);
        const call = this.run<number[]>(name, topic, layout.partitions[partition], args).then((reply) => {
          if (name === 'ack') {
            this.ackFlags(topic, leases, reply, 0, reply.length).forEach((flag, k) => (flags[batch[k]] = flag));
            return;
          }
          // extend replies start with the new deadline, which heartbeats keep on the message.
          const first = name === 'extend' ? 1 : 0;
          batch.forEach((i, k) => {
            const flag = reply[first + k];
            if (name === 'extend' && flag === 1) messages[i].leaseDeadline = reply[0];
            flags[i] = flag === 1;
          });
        });
        calls.push(call);
      }
    }
    await (calls.length === 1 ? calls[0] : Promise.all(calls));
    return flags;
  }

  /** The ack script's answers (`count` flags from `reply[from]`) as acked or not, one per lease. */
  private ackFlags(topic: string, leases: Lease[], reply: number[], from: number, count: number): boolean[] {
    const serverNow = Date.now() + this.serverOffsetMs;
    const observed = this.events.observed;
    const flags: boolean[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const flag = Number(reply[from + i]);
      const lease = leases[i];
      // An ack answered "already gone" while this lease was still live was this lease's own ack,
      // resent by ioredis after a reply was lost to a dropped connection: it counts as acked.
      const held = flag === 1 || (flag === 2 && (lease.leaseDeadline ?? 0) > serverNow);
      flags[i] = held;
      if (held && observed) this.emit({ type: 'acked', topic, id: lease.id, attempt: lease.attempt });
    }
    return flags;
  }

  /** How many messages are in each state. */
  async stats(topic: string): Promise<QueueStats> {
    assertTopic(topic);
    const layout = this.layouts.get(topic);
    const replies = await Promise.all(layout.partitions.map((keys) => this.run<number[]>('stats', topic, keys, [])));
    const sum = (i: number) => replies.reduce((total, reply) => total + reply[i], 0);
    return { ready: sum(0), delayed: sum(1), leased: sum(2), dead: sum(3) };
  }

  /** A page of dead letters, oldest first. */
  async deadLetters<T = unknown>(topic: string, options: { offset?: number; limit?: number } = {}): Promise<DeadLetter<T>[]> {
    assertTopic(topic);
    const { offset = 0, limit = 100 } = options;
    assertInteger('offset', offset, 0);
    assertInteger('limit', limit, 1, 10_000);
    const { partitions } = this.layouts.get(topic);
    // Of several partitions, each one's oldest offset + limit, merged by time of death.
    const [first, count] = partitions.length === 1 ? [offset, limit] : [0, offset + limit];
    const replies = await Promise.all(
      partitions.map((keys) => this.run<(string | null)[]>('deadList', topic, keys, [first, count])),
    );
    const letters: DeadLetter<T>[] = [];
    for (const reply of replies) letters.push(...decodeDeadLetters<T>(topic, reply));
    if (partitions.length === 1) return letters;
    return letters.sort((a, b) => a.deadAt - b.deadAt).slice(offset, offset + limit);
  }

  /** Sends dead letters (the given ids, or all) back to ready with attempts reset; returns how many. */
  requeueDead(topic: string, ids?: string[]): Promise<number> {
    return this.sweepDead('deadRequeue', topic, ids);
  }

  /** Deletes dead letters (the given ids, or all) for good; returns how many. */
  purgeDead(topic: string, ids?: string[]): Promise<number> {
    return this.sweepDead('deadPurge', topic, ids);
  }

  /**
   * Runs `handler` for every message of `topic` until the consumer is closed: leases,
   * heartbeats, acks when the handler resolves, nacks with backoff when it fails.
   */
  consume<T = unknown>(topic: string, handler: QueueHandlerFn<T>, options: QueueHandlerOptions = {}): QueueConsumer {
    this.assertOpen('consume');
    assertTopic(topic);
    const settings = resolveConsumerSettings(options, this.settings);
    const blocking = openBlockingConnection(this.client, `ackq:${topic}`);
    const poller = new QueuePoller<T>(this, topic, handler, settings, {
      blocking,
      wakeKey: this.layouts.get(topic).home.wake,
      emit: (event) => this.emit(event),
      onClosed: () => this.consumers.delete(poller as QueuePoller<unknown>),
    });
    this.consumers.add(poller as QueuePoller<unknown>);
    poller.start();
    return poller;
  }

  /**
   * Resolves when `topic` has nothing ready, delayed or leased: for tests of apps that
   * use the queue, instead of sleeping. Rejects with IdleTimeoutError after `timeoutMs`.
   */
  async waitUntilIdle(topic: string, options: { timeoutMs?: number } = {}): Promise<void> {
    const { timeoutMs = 30_000 } = options;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { ready, delayed, leased } = await this.stats(topic);
      if (ready + delayed + leased === 0) return;
      const left = deadline - Date.now();
      if (left <= 0) throw new IdleTimeoutError(topic, timeoutMs);
      await this.nextEventOrTimeout(topic, Math.min(left, 50));
    }
  }

  /** Drains the consumers of this service, then closes the connections it opened. */
  close(drainMs = this.settings.drainMs): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([...this.consumers].map((consumer) => consumer.close(drainMs)));
      this.events.complete();
      if (this.ownsClient && this.client.status !== 'end') {
        await this.client.quit().catch(() => this.client.disconnect());
      }
    })();
    return this.closing;
  }

  /** Nest calls this last on shutdown: consumers have drained, connections close now. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /** The effective settings, for the consumer side of the module. */
  get options(): Readonly<ServiceSettings> {
    return this.settings;
  }

  /** The push script's four arguments for one item: id, body, delayMs, availableAt. */
  private encodeItem(topic: string, item: PushManyItem): [string, string, number, number] {
    if (typeof item !== 'object' || item === null) {
      throw new InvalidOptionError('item', item, 'an object { payload, ...options }');
    }
    const { id = this.nextId(), delayMs = 0, availableAt, maxAttempts, headers } = item;
    assertMessageId(id);
    assertDuration('delayMs', delayMs);
    assertOptionalInteger('maxAttempts', maxAttempts, 1, 1_000_000);
    if (headers !== undefined) assertHeaders(headers);
    const at = availableAt === undefined ? 0 : toEpochMs('availableAt', availableAt);
    return [id, encodeBody(topic, item.payload, item, this.settings.maxPayloadBytes), Math.ceil(delayMs), at];
  }

  /** Unique without coordination: a random per-process prefix and a counter. */
  private nextId(): string {
    return this.idPrefix + (this.idCounter++).toString(36);
  }

  private async sweepDead(name: 'deadRequeue' | 'deadPurge', topic: string, ids?: string[]): Promise<number> {
    this.assertOpen(name === 'deadPurge' ? 'purge dead letters' : 'requeue dead letters');
    assertTopic(topic);
    if (ids !== undefined) {
      if (!Array.isArray(ids)) throw new InvalidOptionError('ids', ids, 'an array of message ids');
      ids.forEach((id) => assertMessageId(id));
    }
    const layout = this.layouts.get(topic);
    const sweeps =
      ids === undefined
        ? layout.partitions.map((keys) => this.sweepPartition(name, topic, keys))
        : [...byPartition(layout, ids.map((id) => ({ id })))].map(([partition, positions]) =>
            this.sweepPartition(name, topic, layout.partitions[partition], positions.map((i) => ids[i])),
          );
    const counts = await Promise.all(sweeps);
    const total = counts.reduce((sum, n) => sum + n, 0);
    if (name === 'deadRequeue' && total > 0 && layout.partitions.length > 1) await this.wakeHome(layout);
    return total;
  }

  private async sweepPartition(name: 'deadRequeue' | 'deadPurge', topic: string, keys: QueueKeys, ids?: string[]) {
    let total = 0;
    if (ids !== undefined) {
      for (let i = 0; i < ids.length; i += LIMITS.idsPerCall) {
        const [, done] = await this.run<number[]>(name, topic, keys, [0, ...ids.slice(i, i + LIMITS.idsPerCall)]);
        total += done;
      }
      return total;
    }
    // All of them, a bounded slice per call so Redis never stalls on a huge dead set.
    for (;;) {
      const [taken, done] = await this.run<number[]>(name, topic, keys, [LIMITS.idsPerCall]);
      total += done;
      if (taken < LIMITS.idsPerCall) return total;
    }
  }

  private async run<T>(name: QueueScriptName, topic: string, keys: QueueKeys, args: (string | number)[]): Promise<T> {
    try {
      return await runQueueScript<T>(this.client, name, keys, args);
    } catch (error) {
      throw mapRedisError(error, name, topic);
    }
  }

  /** Wakes a consumer of a partitioned topic: they wait in the home slot, not the partitions'. */
  private async wakeHome(layout: TopicLayout): Promise<void> {
    await this.run('wake', layout.name, layout.home, []);
  }

  private assertLeases(operation: string, topic: string, messages: Pick<ReservedMessage, 'id' | 'token'>[]): void {
    this.assertOpen(operation);
    if (!Array.isArray(messages)) throw new InvalidOptionError('messages', messages, 'an array of reserved messages');
    for (const message of messages) this.assertLease(topic, message);
  }

  private assertLease(topic: string, message: Pick<ReservedMessage, 'id' | 'token'>): void {
    assertTopic(topic);
    assertMessageId(message?.id);
    if (typeof message.token !== 'string' || message.token === '') {
      throw new InvalidOptionError('token', message.token, 'the token of a reserved message');
    }
  }

  private assertOpen(operation: string): void {
    if (this.closing) throw new QueueClosedError(operation);
  }

  private emit(event: RedisAckQueueEvent): void {
    if (this.events.observed) this.events.next(event);
  }

  private nextEventOrTimeout(topic: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const subscription = this.events.subscribe((event) => event.topic === topic && done());
      function done() {
        clearTimeout(timer);
        subscription.unsubscribe();
        resolve();
      }
    });
  }
}

/** The earlier of two waits in ms, where -1 means nothing is scheduled. */
function earliestDue(a: number, b: number): number {
  if (a < 0) return b;
  return b < 0 ? a : Math.min(a, b);
}
