import type { ConsumerLiveness } from '../interfaces';

/** How often the liveness timer ticks (ms): a longer gap between ticks means a blocked event loop. */
const TICK_MS = 500;
/** How long a long gap between ticks stays reported after it ended (ms). */
const GAP_MEMORY_MS = 60_000;

/** Where Redis' answers are noted per topic: the engine, where scripts run (QueueEngine). */
export interface AnswerTimes {
  /** Date.now() when Redis last answered a script of `topic`; undefined before the first. */
  lastAnswerAt(topic: string): number | undefined;
}

/**
 * What a health check needs to see a stalled consumer: when Redis last answered it (a
 * reserve, ack, nack or heartbeat extension, noted per topic where scripts run, or its own
 * blocking wait's reply, which an idle consumer gets at least every 5 s), and the longest
 * recent gap between ticks of a timer (an event loop blocked by a synchronous handler shows
 * there once it resumes).
 */
export class PollerLiveness {
  /** The consumer's start, then each answer to its blocking wait. */
  private waitAnsweredAt = Date.now();
  private lastTickAt = Date.now();
  private longGap = { ms: 0, at: 0 };
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly topic: string,
    private readonly scripts: AnswerTimes,
  ) {
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** Redis answered the consumer's blocking wait (see WakeSignal.onAnswer). */
  readonly answered = (): void => {
    this.waitAnsweredAt = Date.now();
  };

  snapshot(): ConsumerLiveness {
    const now = Date.now();
    const recent = now - this.longGap.at <= GAP_MEMORY_MS ? this.longGap.ms : 0;
    return {
      topic: this.topic,
      msSinceAnswer: now - Math.max(this.waitAnsweredAt, this.scripts.lastAnswerAt(this.topic) ?? 0),
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
