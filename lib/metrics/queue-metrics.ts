import { Logger } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type * as PromClient from 'prom-client';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueueGauges, RedisAckQueueEvent } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { withinBound } from '../engine/call-bound';
import { requirePeer } from '../observability/optional-peer';
import type { RedisAckQueueMetricsOptions, RedisAckQueueMetricsRegistry } from './metrics-options.interface';

/** Event types counted, each in its own counter; `rejected` counts the dead events of reason rejected. */
const COUNTED = ['pushed', 'acked', 'retried', 'dead', 'rejected', 'lease-lost', 'cancelled'] as const;
const STATES = ['ready', 'delayed', 'leased', 'dead', 'completed'] as const;
const GAUGE_AND_HISTOGRAM_NAMES = [
  'redis_ack_queue_handler_duration_seconds',
  'redis_ack_queue_wait_seconds',
  'redis_ack_queue_messages',
  'redis_ack_queue_oldest_ready_age_seconds',
  'redis_ack_queue_paused',
];
const counterName = (type: string) => `redis_ack_queue_${type.replace('-', '_')}_total`;
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One topic's counters and histograms, bound to its label. */
interface TopicSeries {
  counters: Map<string, { inc(): void }>;
  duration: { observe(value: number): void };
  wait: { observe(value: number): void };
}

/**
 * Prometheus metrics of one service, with prom-client (an optional peer, loaded here):
 * counters and histograms fed by `events$`, gauges read from Redis at scrape time with one
 * read-only script call per topic partition, bounded by `scrapeTimeoutMs`. Every metric is
 * labelled by `topic` only: no ids, payloads or headers.
 */
export class RedisAckQueueMetrics {
  private readonly logger = new Logger('RedisAckQueue');
  /** Where the metrics are registered: the `registry` option, or prom-client's default `register`. */
  readonly registry: RedisAckQueueMetricsRegistry;
  private readonly counters = new Map<string, Counter<'topic'>>();
  private readonly duration: Histogram<'topic'>;
  private readonly wait: Histogram<'topic'>;
  private readonly messages: Gauge<'topic' | 'state'>;
  private readonly lag: Gauge<'topic'>;
  private readonly topics: Set<string>;
  private readonly names: string[] = [];
  private readonly series = new Map<string, TopicSeries>();
  private readonly subscription: Subscription;
  /** The gauge reads of the scrape under way, shared by both gauges' collect. */
  private reading: Promise<Map<string, QueueGauges>> | undefined;

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
      this.counters.set(type, new prom.Counter({ name, help: `Messages ${type} (per topic)`, labelNames, registers }));
    }
    const buckets = options.buckets ?? BUCKETS;
    this.duration = new prom.Histogram({
      name: 'redis_ack_queue_handler_duration_seconds',
      help: 'Handler run time of settled deliveries (acked, retried, dead)',
      labelNames,
      buckets,
      registers,
    });
    this.wait = new prom.Histogram({
      name: 'redis_ack_queue_wait_seconds',
      help: "Deliveries: from due (the push, or a retry's due time) to reserve (Redis server clock)",
      labelNames,
      buckets,
      registers,
    });
    this.messages = new prom.Gauge({
      name: 'redis_ack_queue_messages',
      help: 'Messages per state (ready, delayed, leased, dead, completed), read from Redis at scrape time',
      labelNames: ['topic', 'state'],
      registers,
      collect: async () => {
        this.messages.reset();
        for (const [topic, gauges] of await this.read()) {
          for (const state of STATES) this.messages.set({ topic, state }, gauges[state]);
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
        for (const [topic, gauges] of await this.read())
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
        for (const [topic, gauges] of await this.read()) paused.set({ topic }, gauges.paused ? 1 : 0);
      },
    });
    this.names.push(...[...this.counters.keys()].map(counterName), ...GAUGE_AND_HISTOGRAM_NAMES);
    this.subscription = service.events$.subscribe((event) => this.count(event));
  }

  /** Unsubscribes from events$ and removes the metrics from the registry. */
  close(): void {
    this.subscription.unsubscribe();
    for (const name of this.names) (this.registry as Registry).removeSingleMetric(name);
  }

  private count(event: RedisAckQueueEvent): void {
    const { topic, type, durationMs, waitMs } = event;
    if (!this.counters.has(type)) return;
    // Label lookups hash every time: each topic's series are bound once.
    let series = this.series.get(topic);
    if (!series) {
      this.topics.add(topic);
      series = {
        counters: new Map([...this.counters].map(([name, counter]) => [name, counter.labels(topic)])),
        duration: this.duration.labels(topic),
        wait: this.wait.labels(topic),
      };
      this.series.set(topic, series);
    }
    series.counters.get(type)!.inc();
    if (event.reason === 'rejected') series.counters.get('rejected')!.inc();
    if (durationMs !== undefined) series.duration.observe(durationMs / 1000);
    if (waitMs !== undefined) series.wait.observe(waitMs / 1000);
  }

  /** Both gauges of one scrape share one read per topic. */
  private read(): Promise<Map<string, QueueGauges>> {
    this.reading ??= this.readAll().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async readAll(): Promise<Map<string, QueueGauges>> {
    const bound = this.options.scrapeTimeoutMs ?? 1_000;
    const read = async (topic: string) =>
      [topic, await withinBound(this.service.gauges(topic), bound, 'read gauges', topic)] as const;
    const results = await Promise.allSettled([...this.topics].map(read));
    const gauges = new Map<string, QueueGauges>();
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') gauges.set(...result.value);
      else this.logger.warn(MESSAGES.gaugesFailed([...this.topics][i], (result.reason as Error).message));
    }
    return gauges;
  }
}
