/**
 * The part of a prom-client `Registry` the metrics use: pass your own, or leave it out for
 * prom-client's default `register`. (Typed structurally so the package's types do not need
 * prom-client installed.)
 */
export interface RedisAckQueueMetricsRegistry {
  /** prom-client's `Registry.contentType`. */
  readonly contentType: string;
  /** prom-client's `Registry.metrics()`: the text exposition. */
  metrics(): Promise<string>;
}

/** Options of {@link RedisAckQueueMetrics} and `RedisAckQueueMetricsModule.forRoot`. */
export interface RedisAckQueueMetricsOptions {
  /**
   * Where the metrics are registered.
   * @defaultValue prom-client's default `register`
   */
  registry?: RedisAckQueueMetricsRegistry;
  /**
   * Topics whose gauges are read at every scrape, besides those this process has pushed to or
   * consumed from since it started.
   * @defaultValue `[]`
   */
  topics?: string[];
  /**
   * Bound of the gauge reads of one scrape (ms): a topic whose read takes longer (Redis down
   * or slow) shows no gauges in that scrape, and the scrape still answers.
   * @defaultValue `1_000`
   */
  scrapeTimeoutMs?: number;
  /**
   * Histogram buckets (seconds) of the handler duration and wait time.
   * @defaultValue `[0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]`
   */
  buckets?: number[];
}
