import { Logger } from '@nestjs/common';
import type * as PromClient from 'prom-client';
import type { Counter, Gauge, Registry } from 'prom-client';
import type { QueueGauges, ScalingReport } from '../interfaces';
import type { DeliveryTally } from '../queue/delivery-tally';
import { internalsOf } from '../queue/queue-internals';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { withinBound } from '../engine/redis/call-bound';
import { requirePeer } from '../observability/optional-peer';
import type { RedisAckQueueMetricsOptions, RedisAckQueueMetricsRegistry } from './metrics-options.interface';
import { OUTBOX_GAUGE_NAMES, OutboxGauges } from './outbox-gauges';
import { TallyHistogram } from './tally-histogram';

/** What is counted, each in its own counter; `rejected` counts the dead deliveries of reason rejected. */
const COUNTED = ['pushed', 'acked', 'retried', 'dead', 'rejected', 'lease-lost', 'cancelled'] as const;
type Counted = (typeof COUNTED)[number];
/** The `state` label of each count of QueueGauges (a flow's waiting parents as `waiting-children`). */
const STATES = [
  ['ready', 'ready'],
  ['delayed', 'delayed'],
  ['leased', 'leased'],
  ['dead', 'dead'],
  ['completed', 'completed'],
  ['waiting-children', 'waitingChildren'],
] as const;
/** Messages whose start-by deadline passed, by topic and how they ended (its `on_expire` label). */
const EXPIRED_NAME = 'redis_ack_queue_expired_total';
const ON_EXPIRE = ['dead-letter', 'drop'] as const;
const GAUGE_AND_HISTOGRAM_NAMES = [
  EXPIRED_NAME,
  'redis_ack_queue_handler_duration_seconds',
  'redis_ack_queue_wait_seconds',
  'redis_ack_queue_messages',
  'redis_ack_queue_oldest_ready_age_seconds',
  'redis_ack_queue_paused',
  'redis_ack_queue_desired_consumers',
];
const counterName = (type: string) => `redis_ack_queue_${type.replace('-', '_')}_total`;
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const AT: Record<Counted, number> = Object.fromEntries(COUNTED.map((type, i) => [type, i])) as Record<Counted, number>;

/** One topic's counts not yet handed to prom-client, by COUNTED index. */
type Pending = number[];

/** What one scrape reads of a topic: its gauges, and its scaling signal (null: no target, or not read). */
type TopicReads = readonly [gauges: QueueGauges, scaling: ScalingReport | null];

/**
 * Prometheus metrics of one service, with prom-client (an optional peer, loaded here):
 * counters and histograms fed by the service's delivery tally (plain numbers, counted in local
 * arrays and handed to prom-client at scrape time: no event object or prom-client call per
 * message, and no subscriber on `events$`, which would make every delivery build its events),
 * gauges read from Redis at scrape time with one read-only script call per topic partition,
 * bounded by `scrapeTimeoutMs`. Every metric is labelled by `topic` only: no ids, payloads or
 * headers. A service with the option `outbox` has the outbox's gauges too (OutboxGauges).
 */
export class RedisAckQueueMetrics {
  private readonly logger = new Logger('RedisAckQueue');
  /** Where the metrics are registered: the `registry` option, or prom-client's default `register`. */
  readonly registry: RedisAckQueueMetricsRegistry;
  private readonly counters = new Map<Counted, Counter<'topic'>>();
  private readonly duration: TallyHistogram;
  private readonly wait: TallyHistogram;
  private readonly messages: Gauge<'topic' | 'state'>;
  private readonly lag: Gauge<'topic'>;
  private readonly topics: Set<string>;
  private readonly names: string[] = [];
  /** Per topic, the counts since the last scrape (each counter's collect hands its own over). */
  private readonly pending = new Map<string, Pending>();
  /** Per topic, the expired messages since the last scrape, by ON_EXPIRE index. */
  private readonly expired = new Map<string, number[]>();
  private readonly untally: () => void;
  /** The gauge reads of the scrape under way, shared by every gauge's collect. */
  private reading: Promise<Map<string, TopicReads>> | undefined;

  constructor(
    private readonly service: RedisAckQueueService,
    private readonly options: RedisAckQueueMetricsOptions = {},
  ) {
    const prom = requirePeer<typeof PromClient>('prom-client', 'RedisAckQueueMetrics');
    const registry = (options.registry ?? prom.register) as Registry;
    this.registry = registry;
    this.topics = new Set(options.topics ?? []);
    const registers = [registry];
    const labelNames = ['topic'] as const;
    for (const type of COUNTED) {
      const name = counterName(type);
      const at = AT[type];
      const counter: Counter<'topic'> = new prom.Counter({
        name,
        help: `Messages ${type} (per topic)`,
        labelNames,
        registers,
        collect: () => {
          for (const [topic, counts] of this.pending) {
            if (counts[at] > 0) counter.inc({ topic }, counts[at]);
            counts[at] = 0;
          }
        },
      });
      this.counters.set(type, counter);
    }
    const expired: Counter<'topic' | 'on_expire'> = new prom.Counter({
      name: EXPIRED_NAME,
      help: 'Messages whose start-by deadline passed before they started, by how they ended (per topic)',
      labelNames: ['topic', 'on_expire'],
      registers,
      collect: () => {
        for (const [topic, counts] of this.expired) {
          ON_EXPIRE.forEach((on_expire, i) => counts[i] > 0 && expired.inc({ topic, on_expire }, counts[i]));
          counts.fill(0);
        }
      },
    });
    const buckets = options.buckets ?? BUCKETS;
    this.duration = new TallyHistogram(
      'redis_ack_queue_handler_duration_seconds',
      'Handler run time of settled deliveries (acked, retried, dead)',
      buckets,
      registry,
    );
    this.wait = new TallyHistogram(
      'redis_ack_queue_wait_seconds',
      "Deliveries: from due (the push, or a retry's due time) to reserve (Redis server clock)",
      buckets,
      registry,
    );
    this.messages = new prom.Gauge({
      name: 'redis_ack_queue_messages',
      help: 'Messages per state (ready, delayed, leased, dead, completed, waiting-children), read from Redis at scrape time',
      labelNames: ['topic', 'state'],
      registers,
      collect: async () => {
        this.messages.reset();
        for (const [topic, [gauges]] of await this.read()) {
          for (const [state, count] of STATES) this.messages.set({ topic, state }, gauges[count] ?? 0);
        }
      },
    });
    this.lag = new prom.Gauge({
      name: 'redis_ack_queue_oldest_ready_age_seconds',
      help: 'Age of the oldest ready message (0 when none is ready), read from Redis at scrape time',
      labelNames,
      registers,
      collect: async () => {
        this.lag.reset();
        for (const [topic, [gauges]] of await this.read())
          this.lag.set({ topic }, Math.max(0, gauges.oldestReadyAgeMs) / 1000);
      },
    });
    const paused: Gauge<'topic'> = new prom.Gauge({
      name: 'redis_ack_queue_paused',
      help: '1 while the topic is paused (pause()), else 0, read from Redis at scrape time',
      labelNames,
      registers,
      collect: async () => {
        paused.reset();
        for (const [topic, [gauges]] of await this.read()) paused.set({ topic }, gauges.paused ? 1 : 0);
      },
    });
    const desired: Gauge<'topic'> = new prom.Gauge({
      name: 'redis_ack_queue_desired_consumers',
      help: 'Consumers the topic needs for its scaling target (setScalingTarget; topics with one only), read from Redis at scrape time',
      labelNames,
      registers,
      collect: async () => {
        desired.reset();
        for (const [topic, [, scaling]] of await this.read()) {
          if (scaling) desired.set({ topic }, scaling.desiredConsumers);
        }
      },
    });
    this.names.push(...[...this.counters.keys()].map(counterName), ...GAUGE_AND_HISTOGRAM_NAMES);
    if (internalsOf(service).outbox) {
      new OutboxGauges(prom, registry, service, options.scrapeTimeoutMs ?? 1_000, this.logger);
      this.names.push(...OUTBOX_GAUGE_NAMES);
    }
    this.untally = internalsOf(service).tally.add(this.tally);
  }

  /** Stops counting and removes the metrics from the registry. */
  close(): void {
    this.untally();
    for (const name of this.names) (this.registry as Registry).removeSingleMetric(name);
  }

  /** What the service's tally tells: plain numbers, counted here until the next scrape. */
  private readonly tally: DeliveryTally = {
    pushed: (topic, count) => (this.countOf(topic)[AT.pushed] += count),
    cancelled: (topic, count) => (this.countOf(topic)[AT.cancelled] += count),
    leaseLost: (topic) => this.countOf(topic)[AT['lease-lost']]++,
    expired: (topic, onExpire) => {
      this.countOf(topic);
      let counts = this.expired.get(topic);
      if (!counts) this.expired.set(topic, (counts = ON_EXPIRE.map(() => 0)));
      counts[onExpire === 'drop' ? 1 : 0]++;
    },
    settled: (topic, outcome, durationMs, waitMs, reason) => {
      const counts = this.countOf(topic);
      counts[AT[outcome]]++;
      if (reason === 'rejected') counts[AT.rejected]++;
      if (durationMs !== undefined) this.duration.observe(topic, durationMs / 1000);
      if (waitMs !== undefined) this.wait.observe(topic, waitMs / 1000);
    },
  };

  /** `topic`'s pending counts (its gauges are read from its first count on). */
  private countOf(topic: string): Pending {
    let counts = this.pending.get(topic);
    if (!counts) {
      this.topics.add(topic);
      counts = COUNTED.map(() => 0);
      this.pending.set(topic, counts);
    }
    return counts;
  }

  /** The gauges of one scrape share one read per topic. */
  private read(): Promise<Map<string, TopicReads>> {
    this.reading ??= this.readAll().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async readAll(): Promise<Map<string, TopicReads>> {
    const bound = this.options.scrapeTimeoutMs ?? 1_000;
    const read = async (topic: string) => {
      const gauges = await withinBound(this.service.gauges(topic), bound, 'read gauges', topic, 'the scrapeTimeoutMs');
      return [topic, [gauges, await this.scalingOf(topic, gauges, bound)]] as const;
    };
    const results = await Promise.allSettled([...this.topics].map(read));
    const gauges = new Map<string, TopicReads>();
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') gauges.set(...result.value);
      else this.logger.warn(MESSAGES.gaugesFailed([...this.topics][i], (result.reason as Error).message));
    }
    return gauges;
  }

  /**
   * The topic's scaling signal from the gauges just read (one script call, partitioned or not:
   * its backlog and pushed total come from them); null without a target, or when the read fails
   * (the other gauges are served all the same).
   */
  private async scalingOf(topic: string, gauges: QueueGauges, bound: number): Promise<ScalingReport | null> {
    const totals = { backlog: gauges.ready, pushed: gauges.pushedTotal };
    const reading = internalsOf(this.service).scaling(topic, totals);
    try {
      return await withinBound(reading, bound, 'read the scaling signal', topic, 'the scrapeTimeoutMs');
    } catch (error) {
      this.logger.warn(MESSAGES.gaugesFailed(topic, (error as Error).message));
      return null;
    }
  }
}
