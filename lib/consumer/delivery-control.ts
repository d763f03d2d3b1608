import { completedLease, type ConsumerEngine, type CompletedPolicy } from '../engine/consumer-engine';
import { completionExtra, encodeStoredValue } from '../engine/codecs/lookup-format';
import { MessageCancelledError } from '../errors';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import type { ConsumerReporting } from './failed-deliveries';
import { abortHandler, type ReportProgress } from './handler-context';
import { messagesOf, type InFlight } from './in-flight';
import { ProgressReporter } from './progress-reporter';

/** Cancels heard for leases not running yet (prefetched): their handler starts already aborted. */
const EARLY_CANCELS_KEPT = 1_000;

/**
 * A LeaseKeeper's job control: cancels heard from other processes (the running handler's
 * signal aborts, its outcome is ignored), progress, and acks of topics that keep completed
 * messages (complete.lua, with the handler's result, instead of riding along with reserve).
 * It owns the early cancels (and, through its ProgressReporter, the progress throttles); it
 * only reads the keeper's running handlers.
 */
export class DeliveryControl<T> {
  readonly policy: CompletedPolicy | undefined;
  private readonly reporter: ProgressReporter;
  /** What a handler context's `progress` does (the throttles are the ProgressReporter's). */
  readonly progress: ReportProgress;
  private readonly earlyCancels = new Set<string>();
  private readonly stopListening: (() => void) | undefined;

  constructor(
    private readonly engine: ConsumerEngine,
    private readonly topic: string,
    private readonly report: ConsumerReporting,
    /** The keeper's running handlers, by lease token. */
    private readonly inFlight: ReadonlyMap<string, InFlight<T>>,
  ) {
    this.policy = engine.completedPolicy(topic);
    this.reporter = new ProgressReporter(engine, topic, report);
    this.progress = this.reporter.progress;
    this.stopListening = report.cancels?.listen(topic, (token, id) => this.cancelled(token, id));
  }

  /** A handler starts now: aborted at once if its lease was cancelled while it waited (prefetched). */
  starting(entry: InFlight<T>): void {
    const { token, id } = entry.message;
    if (this.earlyCancels.size > 0 && this.earlyCancels.delete(`${token} ${id}`)) this.cancel(entry);
  }

  /**
   * A handler resolved with `result`: keeps what its completed record needs. Its ack goes
   * through complete.lua when the topic keeps completed messages, or when it reported
   * progress (which reserve.lua's acks leave behind); else it may ride along with a reserve.
   */
  succeeded(entry: InFlight<T>, result: unknown): InFlight<T> {
    const childBound = this.engine.flows.resultBound(entry.message);
    if (!this.policy && childBound === undefined) {
      if (this.reporter.used && this.reporter.reported(entry)) entry.completion = '{}';
      return entry;
    }
    // A flow's child hands its result to its parent through complete.lua.
    const bound = this.policy?.maxResultBytes ?? childBound!;
    const encoded = result === undefined ? undefined : encodeStoredValue(result, bound);
    if (encoded && 'problem' in encoded) {
      const { id } = entry.message;
      const text = this.policy ? MESSAGES.resultDropped : MESSAGES.childResultDropped;
      this.report.logger.warn(text(this.topic, id, encoded.problem));
    }
    const json = encoded && 'json' in encoded ? encoded.json : undefined;
    // A topic with a codec seals the result on its way to Redis (sendAcks).
    if (json !== undefined && this.report.codecs?.writer(this.topic)) entry.resultToSeal = json;
    entry.completion = completionExtra(entry.resultToSeal ? undefined : json, entry.durationMs);
    return entry;
  }

  /** Acks finished handlers: deleted, or kept as completed records. One flag per entry. */
  async sendAcks(entries: InFlight<T>[]): Promise<boolean[]> {
    const completing = entries.filter((entry) => entry.completion !== undefined);
    if (completing.length === 0) return this.engine.settle('ack', this.topic, messagesOf(entries));
    const plain = entries.filter((entry) => entry.completion === undefined);
    await Promise.all(completing.map((entry) => this.sealResult(entry)));
    const leases = completing.map(({ message, completion }) => completedLease(message, completion!));
    const [completed, acked] = await Promise.all([
      this.engine.complete(this.topic, leases),
      plain.length > 0 ? this.engine.settle('ack', this.topic, messagesOf(plain)) : [],
    ]);
    const flags = new Map<InFlight<T>, boolean>();
    completing.forEach((entry, i) => flags.set(entry, completed[i]));
    plain.forEach((entry, i) => flags.set(entry, acked[i]));
    return entries.map((entry) => flags.get(entry)!);
  }

  close(): void {
    this.stopListening?.();
  }

  private async sealResult(entry: InFlight<T>): Promise<void> {
    const json = entry.resultToSeal;
    if (json === undefined) return;
    entry.resultToSeal = undefined;
    entry.completion = completionExtra(undefined, entry.durationMs, await this.report.codecs!.seal(this.topic, json));
  }

  private cancelled(token: string, id: string): void {
    const entry = this.inFlight.get(token);
    if (entry && entry.message.id === id) return this.cancel(entry);
    // Maybe prefetched and not started yet: remember it for a while.
    this.earlyCancels.add(`${token} ${id}`);
    if (this.earlyCancels.size > EARLY_CANCELS_KEPT) {
      this.earlyCancels.delete(this.earlyCancels.values().next().value!);
    }
  }

  /** Its outcome no longer counts (released), and its late ack's refusal is no lost lease (lost). */
  private cancel(entry: InFlight<T>): void {
    entry.released = true;
    entry.cancelled = true;
    entry.lost = true;
    abortHandler(entry, new MessageCancelledError(this.topic, entry.message.id));
  }
}
