import { Cron } from 'croner';
import { LIMITS } from '../../common/redis-ack-queue.constants';
import { encodeBody } from '../../engine/codecs/wire-format';
import { InvalidOptionError, InvalidScheduleError } from '../../errors';
import type { ScheduleOptions } from '../../interfaces';
import { assertOnExpire, relativeDeadline } from '../push-extras';
import { assertBounded, assertHeaders, toEpochMs } from '../validation';

const NAME = /^[A-Za-z0-9._:-]+$/;

/** A checked schedule: what its ticks are computed from, and the body each tick pushes. */
export interface ScheduleSpec {
  cron?: string;
  everyMs?: number;
  tz?: string;
  /** The stored body of each tick's message (wire-format.ts), without enqueuedAt. */
  body: string;
  startAt?: number;
  endAt?: number;
  /** Declared by code (the module's `schedules`): a startup that no longer declares it removes it. */
  declared?: boolean;
  /** Each tick's message must start within this many ms of its tick (a start-by deadline). */
  expiresInMs?: number;
  /** Set only to drop a tick's message whose deadline passed (else it becomes a dead letter). */
  onExpire?: 'drop';
}

/** Schedule names follow the topic rule, at most 100 characters. */
export function assertScheduleName(topic: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length > LIMITS.nameLength || !NAME.test(name)) {
    throw new InvalidScheduleError(topic, name, 'name it with 1-100 characters of A-Z a-z 0-9 . _ - :');
  }
}

/** Checks a schedule's options (the cron expression and time zone through croner); throws before anything changes. */
export function resolveSchedule(topic: string, name: string, options: unknown, maxPayloadBytes: number): ScheduleSpec {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidOptionError('options', options, 'an object { cron } or { everyMs } with the schedule options');
  }
  const { cron, everyMs, tz, payload, headers, startAt, endAt, expiresInMs, onExpire } = options as ScheduleOptions;
  const invalid = (reason: string) => new InvalidScheduleError(topic, name, reason);
  if ((cron === undefined) === (everyMs === undefined)) throw invalid('give exactly one of cron and everyMs');
  if (everyMs !== undefined) assertBounded('everyMs', everyMs);
  if (tz !== undefined && !validTimeZone(tz))
    throw invalid(`unknown time zone ${JSON.stringify(tz)}: use an IANA name`);
  if (cron !== undefined) assertCron(cron, tz, invalid);
  if (headers !== undefined) assertHeaders(headers);
  if (expiresInMs !== undefined) relativeDeadline('expiresInMs', expiresInMs);
  if (onExpire !== undefined) assertOnExpire(onExpire, expiresInMs !== undefined);
  const spec: ScheduleSpec = {
    ...(cron !== undefined && { cron }),
    ...(everyMs !== undefined && { everyMs }),
    ...(tz !== undefined && { tz }),
    body: encodeBody(topic, payload === undefined ? null : payload, { headers }, maxPayloadBytes),
    ...(startAt !== undefined && { startAt: toEpochMs('startAt', startAt) }),
    ...(endAt !== undefined && { endAt: toEpochMs('endAt', endAt) }),
    ...(expiresInMs !== undefined && { expiresInMs }),
    ...(onExpire === 'drop' && { onExpire }),
  };
  if (spec.startAt !== undefined && spec.endAt !== undefined && spec.endAt < spec.startAt) {
    throw invalid('endAt is before startAt');
  }
  return spec;
}

function validTimeZone(tz: unknown): tz is string {
  if (typeof tz !== 'string' || tz === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function assertCron(cron: unknown, tz: string | undefined, invalid: (reason: string) => Error): void {
  if (typeof cron !== 'string') throw invalid('cron must be a string such as "0 2 * * *"');
  // croner also reads a 7th field (years); the README promises 5 or 6.
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) throw invalid(`the cron expression has ${fields} fields: use 5, or 6 with seconds`);
  try {
    new Cron(cron, { timezone: tz ?? 'UTC', paused: true });
  } catch (error) {
    // croner's reason names the field; the expression is the caller's own text.
    throw invalid(`invalid cron expression ${JSON.stringify(cron)} (${(error as Error).message})`);
  }
}

/** The definition as stored: JSON with a fixed key order, so an unchanged schedule compares equal as text. */
export function encodeDefinition(spec: ScheduleSpec): string {
  const { cron: c, everyMs: e, tz: z, body: b, startAt: s, endAt: x, declared, expiresInMs: l, onExpire } = spec;
  // d, l and o are read by this release only; older ones ignore them (their ticks get no deadline).
  return JSON.stringify({ c, e, z, b, s, x, d: declared ? 1 : undefined, l, o: onExpire });
}

/** A definition as stored (see encodeDefinition). */
interface StoredDefinition {
  c?: string;
  e?: number;
  z?: string;
  b?: string;
  s?: number;
  x?: number;
  d?: 1;
  l?: number;
  o?: 'drop';
}

/** A stored definition back as a spec; undefined when it is not one this library wrote. */
export function decodeDefinition(text: string): ScheduleSpec | undefined {
  try {
    const d = JSON.parse(text) as StoredDefinition;
    if (typeof d.b !== 'string' || (typeof d.c !== 'string') === (typeof d.e !== 'number')) return undefined;
    return {
      cron: d.c,
      everyMs: d.e,
      tz: d.z,
      body: d.b,
      startAt: d.s,
      endAt: d.x,
      declared: d.d === 1,
      ...(typeof d.l === 'number' && { expiresInMs: d.l, ...(d.o === 'drop' && { onExpire: d.o }) }),
    };
  } catch {
    return undefined;
  }
}
