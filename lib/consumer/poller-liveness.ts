import type { ConsumerEngine } from '../engine/consumer-engine';
import type { ConsumerLiveness } from '../interfaces';

/** How often the liveness timer ticks (ms): a longer gap between ticks means a blocked event loop. */
const TICK_MS = 500;
/** How long a long gap between ticks stays reported after it ended (ms). */
const GAP_MEMORY_MS = 60_000;

/**
 * What a health check needs to see a stalled consumer: when Redis last answered it (a
 * reserve, ack, nack or heartbeat extension, or the blocking wait's reply, which an idle
 * consumer gets at least every 5 s), and the longest recent gap between ticks of a timer
 * (an event loop blocked by a synchronous handler shows there once it resumes).
 */
export class PollerLiveness {
  private lastAnswerAt = Date.now();
  private lastTickAt = Date.now();
  private longGap = { ms: 0, at: 0 };
  private readonly timer: NodeJS.Timeout;

  constructor(readonly topic: string) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  readonly answered = (): void => {
    this.lastAnswerAt = Date.now();
  };

  /** The engine the consumer uses, noting every answer of Redis. */
  watch(engine: ConsumerEngine): ConsumerEngine {
    const noted = <R>(reply: Promise<R>) =>
      reply.then((value) => {
        this.lastAnswerAt = Date.now();
        return value;
      });
    return {
      partitionCount: (topic) => engine.partitionCount(topic),
      reserve: (topic, partition, request, acks) => noted(engine.reserve(topic, partition, request, acks)),
      settle: (action, topic, leases, leaseMs) => noted(engine.settle(action, topic, leases, leaseMs)),
      nack: (topic, lease, failure) => noted(engine.nack(topic, lease, failure)),
      defer: (topic, lease, delayMs, maxDeferrals, hold) =>
        noted(engine.defer(topic, lease, delayMs, maxDeferrals, hold)),
      bury: (topic, leases, reason, error, maxAttempts) =>
        noted(engine.bury(topic, leases, reason, error, maxAttempts)),
      completedPolicy: (topic) => engine.completedPolicy(topic),
      complete: (topic, leases) => noted(engine.complete(topic, leases)),
      progress: (topic, lease, json) => noted(engine.progress(topic, lease, json)),
      flows: engine.flows,
      readSteps: (topic, lease) => noted(engine.readSteps(topic, lease)),
      storeStep: (topic, lease, name, json) => noted(engine.storeStep(topic, lease, name, json)),
    };
  }

  snapshot(): ConsumerLiveness {
    const now = Date.now();
    const recent = now - this.longGap.at <= GAP_MEMORY_MS ? this.longGap.ms : 0;
    return {
      topic: this.topic,
      msSinceAnswer: now - this.lastAnswerAt,
      longestTickGapMs: Math.max(recent, now - this.lastTickAt - TICK_MS),
    };
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const now = Date.now();
    const gap = now - this.lastTickAt - TICK_MS;
    this.lastTickAt = now;
    if (gap >= this.longGap.ms || now - this.longGap.at > GAP_MEMORY_MS)
      this.longGap = { ms: Math.max(0, gap), at: now };
  }
}
