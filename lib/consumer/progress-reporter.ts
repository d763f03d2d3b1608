import type { ConsumerEngine } from '../engine/consumer-engine';
import { encodeStoredValue } from '../engine/codecs/lookup-format';
import { InvalidStoredValueError } from '../errors';
import { asError } from '../errors/error-text';
import { DEFAULTS } from '../common/redis-ack-queue.constants';
import type { ConsumerReporting } from './failed-deliveries';
import type { ContextTarget } from './handler-context';
import type { InFlight } from './in-flight';

/** The throttle of one running message's progress. */
interface Throttle {
  /** Date.now() of the last write sent. */
  lastWriteAt: number;
  /** The latest value not written yet (JSON text). */
  pending: string | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * What a handler's `context.progress(value)` does: checks the value at once (JSON, at most
 * 4 KiB), then writes it with progress.lua, fenced by the lease's token, at most once per
 * message every 200 ms: the first value at once, later ones coalesced, the latest written at
 * the end of the interval. A value still waiting when the handler settles is dropped. Of a
 * topic with a codec, the value is stored sealed (`~` and base64, see ValueCodecs).
 */
export class ProgressReporter {
  private readonly throttles = new WeakMap<ContextTarget, Throttle>();
  /** Whether any handler reported progress yet: acks skip the lookup until one does. */
  used = false;

  constructor(
    private readonly engine: ConsumerEngine,
    private readonly topic: string,
    private readonly report: ConsumerReporting,
    private readonly intervalMs: number = DEFAULTS.progressIntervalMs,
  ) {}

  readonly progress = (target: ContextTarget, value: unknown): void => {
    const encoded = encodeStoredValue(value, DEFAULTS.maxProgressBytes);
    if ('problem' in encoded) throw new InvalidStoredValueError('progress', this.topic, encoded.problem);
    let throttle = this.throttles.get(target);
    if (!throttle) {
      this.used = true;
      this.throttles.set(target, (throttle = { lastWriteAt: 0, pending: undefined, timer: undefined }));
    }
    throttle.pending = encoded.json;
    if (throttle.timer) return;
    const waitMs = throttle.lastWriteAt + this.intervalMs - Date.now();
    if (waitMs <= 0) this.flush(target, throttle);
    else throttle.timer = setTimeout(() => this.flush(target, throttle), waitMs);
  };

  /** Whether the handler of `target` reported progress. */
  reported(target: ContextTarget): boolean {
    return this.throttles.has(target);
  }

  private flush(target: ContextTarget, throttle: Throttle): void {
    throttle.timer = undefined;
    const json = throttle.pending;
    throttle.pending = undefined;
    const entry = target as InFlight<unknown>;
    // The handler settled, was cancelled or lost its lease: its progress no longer matters.
    if (json === undefined || entry.settling || entry.released || entry.lost) return;
    throttle.lastWriteAt = Date.now();
    const { id, attempt } = target.message;
    const { events } = this.report;
    const { codecs } = this.report;
    // Of a topic with a codec, the value is stored sealed (see ValueCodecs); its write stays fenced by the lease.
    const written = codecs?.writer(this.topic)
      ? Promise.resolve()
          .then(() => codecs.seal(this.topic, json))
          .then((sealed) => this.engine.progress(this.topic, target.message, sealed))
      : this.engine.progress(this.topic, target.message, json);
    written.then(
      (stored) => stored && events.emit({ type: 'progress', topic: this.topic, id, attempt }),
      (error: unknown) => events.emit({ type: 'error', topic: this.topic, id, attempt, error: asError(error) }),
    );
  }
}
