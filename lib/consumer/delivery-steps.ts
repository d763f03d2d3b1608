import type { ConsumerEngine } from '../engine/consumer-engine';
import { encodeStoredValue } from '../engine/codecs/lookup-format';
import {
  ConsumerShutdownError,
  InvalidOptionError,
  InvalidStepResultError,
  LeaseLostError,
  MessageCancelledError,
} from '../errors';
import { LIMITS } from '../common/redis-ack-queue.constants';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { isWellFormed } from '../queue/validation';
import type { ValueCodecs } from '../queue/value-codecs';
import type { ContextTarget, RunStep, StepCache } from './handler-context';

/**
 * Refuses a step name that is not a string of 1-256 characters, or holds an unpaired surrogate
 * (it reaches Redis as U+FFFD, so two names would share one step), never quoting it.
 */
export function checkStepName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > LIMITS.stepNameLength || !isWellFormed(name)) {
    throw new InvalidOptionError('step name', name, MESSAGES.stepName(LIMITS.stepNameLength), true);
  }
}

/**
 * A step's result as JSON text, '' for undefined; refused when not JSON data or over 64 KiB. Of a
 * topic with a codec, DeliverySteps stores it sealed (see ValueCodecs).
 */
export function encodeStepResult(topic: string, id: string, name: string, result: unknown): string {
  if (result === undefined) return '';
  const encoded = encodeStoredValue(result, LIMITS.maxStepBytes);
  if ('problem' in encoded) throw new InvalidStepResultError(topic, id, name, 'value', encoded.problem);
  return encoded.json;
}

/** A step's result JSON (opened, when it was stored sealed) as a step returns it: what JSON gives back ('' is undefined). */
export function decodeStepResult(json: string): unknown {
  return json === '' ? undefined : JSON.parse(json);
}

/**
 * Why a delivery runs no more steps: its signal's reason when its lease was lost, its message
 * cancelled or released by a shutdown (a store would be refused); else undefined.
 */
export function deliveryEnded(signal: AbortSignal | undefined): Error | undefined {
  const reason: unknown = signal?.reason;
  return reason instanceof LeaseLostError ||
    reason instanceof MessageCancelledError ||
    reason instanceof ConsumerShutdownError
    ? reason
    : undefined;
}

/** The step refused for a message that holds the most steps it may. */
export function tooManySteps(topic: string, id: string, name: string): InvalidStepResultError {
  return new InvalidStepResultError(topic, id, name, 'count', MESSAGES.tooManySteps(LIMITS.maxSteps));
}

/**
 * What a handler's `context.step(name, fn)` does: at the delivery's first step, reads the steps
 * its message stored before (steps-read.lua, once, fenced by the lease); a name found there
 * returns its result without running `fn`. Otherwise `fn` runs, and its result (JSON, at most 64 KiB) is stored with
 * step.lua, fenced by the lease: a delivery whose lease is gone stores nothing and fails with
 * LeaseLostError (reported as a lost lease). Of a topic with a codec, a result is stored sealed
 * (`~` and base64, see ValueCodecs) and opened when read back; one that cannot be opened fails the
 * step with PayloadDecodeError. One object per consumer; the cache lives on each delivery (its
 * ContextTarget).
 */
export class DeliverySteps {
  constructor(
    private readonly engine: ConsumerEngine,
    private readonly topic: string,
    /** Reports the delivery's lease lost (a refused store says so before the next heartbeat). */
    private readonly lost: (target: ContextTarget) => void,
    /** The topics' codecs: what seals the results stored and opens those read back. */
    private readonly codecs: ValueCodecs,
  ) {}

  readonly run: RunStep = async <R>(target: ContextTarget, name: string, fn: () => R | Promise<R>): Promise<R> => {
    checkStepName(name);
    if (typeof fn !== 'function') throw new InvalidOptionError('step function', fn, 'a function', true);
    const cache = (target.steps ??= this.cache(target));
    const stored = await cache.stored;
    const json = stored.get(name);
    if (json !== undefined) return (await this.decode(json)) as R;
    const running = cache.running.get(name);
    if (running) return running as Promise<R>;
    // A delivery known to be over runs nothing more: its store would be refused.
    const ended = deliveryEnded(target.controller?.signal);
    if (ended) throw ended;
    if (stored.size + cache.running.size >= LIMITS.maxSteps) throw tooManySteps(this.topic, target.message.id, name);
    const work = this.runAndStore(target, stored, name, fn);
    cache.running.set(name, work);
    try {
      return await work;
    } finally {
      cache.running.delete(name);
    }
  };

  /**
   * Reads the stored steps once, fenced by the lease: a lease already gone fails this step and
   * every later one with LeaseLostError (reported as lost); a read that failed otherwise is
   * forgotten, so the next step reads again.
   */
  private cache(target: ContextTarget): StepCache {
    const { id } = target.message;
    const stored = this.engine.readSteps(this.topic, target.message).then((steps) => {
      if (steps) return steps;
      this.lost(target);
      throw new LeaseLostError(this.topic, id);
    });
    const cache: StepCache = { stored, running: new Map() };
    stored.catch((error: unknown) => {
      if (target.steps === cache && !(error instanceof LeaseLostError)) target.steps = undefined;
    });
    return cache;
  }

  private async runAndStore<R>(
    target: ContextTarget,
    stored: Map<string, string>,
    name: string,
    fn: () => R | Promise<R>,
  ): Promise<R> {
    const { id } = target.message;
    const json = encodeStepResult(this.topic, id, name, await fn());
    // An undefined result ('') stays as it is: nothing of the handler's is in it.
    const text = json === '' ? json : await this.codecs.seal(this.topic, json);
    const reply = await this.engine.storeStep(this.topic, target.message, name, text);
    switch (reply.outcome) {
      case 'stored':
        stored.set(name, text);
        return decodeStepResult(json) as R;
      case 'kept':
        stored.set(name, reply.json);
        return (await this.decode(reply.json)) as R;
      case 'full':
        throw tooManySteps(this.topic, id, name);
      case 'lost':
        this.lost(target);
        throw new LeaseLostError(this.topic, id);
    }
  }

  /** A stored result as the step returns it, opened first when a codec sealed it. */
  private async decode(stored: string): Promise<unknown> {
    return decodeStepResult(await this.codecs.open(this.topic, stored));
  }
}
