import { NestFactory } from '@nestjs/core';
import {
  InvalidOptionError,
  InvalidPayloadError,
  InvalidScheduleError,
  InvalidTopicError,
  PayloadTooLargeError,
  QueueKeyTypeError,
  RedisAckQueueModule,
  RedisAckQueueService,
  type ScheduleOptions,
} from '../../lib';
import { snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

type Case = [
  name: string,
  topic: string | null,
  schedule: unknown,
  options: unknown,
  error: abstract new (...args: never[]) => Error,
  text: RegExp,
];

const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

const cases: Case[] = [
  [
    'an invalid cron expression',
    null,
    'job',
    { cron: '61 * * * *' },
    InvalidScheduleError,
    /invalid cron expression "61 \* \* \* \*".*minute/,
  ],
  ['a cron that is not a string', null, 'job', { cron: 5 }, InvalidScheduleError, /cron must be a string/],
  [
    'an unknown time zone',
    null,
    'job',
    { cron: '0 2 * * *', tz: 'Mars/Olympus' },
    InvalidScheduleError,
    /unknown time zone "Mars\/Olympus"/,
  ],
  [
    'everyMs of 0',
    null,
    'job',
    { everyMs: 0 },
    InvalidOptionError,
    /Invalid everyMs 0: expected a whole number from 1 to/,
  ],
  ['a fractional everyMs', null, 'job', { everyMs: 1.5 }, InvalidOptionError, /Invalid everyMs 1.5/],
  [
    'both cron and everyMs',
    null,
    'job',
    { cron: '* * * * *', everyMs: 1_000 },
    InvalidScheduleError,
    /exactly one of cron and everyMs/,
  ],
  ['neither cron nor everyMs', null, 'job', { payload: 1 }, InvalidScheduleError, /exactly one of cron and everyMs/],
  ['no options', null, 'job', null, InvalidOptionError, /Invalid options null/],
  ['an empty name', null, '', { everyMs: 1_000 }, InvalidScheduleError, /Invalid schedule "".*1-100 characters/],
  ['a name with braces', null, 'a{b}', { everyMs: 1_000 }, InvalidScheduleError, /Invalid schedule "a\{b\}"/],
  ['a name that is not a string', null, 7, { everyMs: 1_000 }, InvalidScheduleError, /Invalid schedule 7/],
  ['a bad topic', 'a b', 'job', { everyMs: 1_000 }, InvalidTopicError, /Invalid topic "a b"/],
  [
    'a function payload',
    null,
    'job',
    { everyMs: 1_000, payload: () => 1 },
    InvalidPayloadError,
    /not JSON-serializable/,
  ],
  ['a cyclic payload', null, 'job', { everyMs: 1_000, payload: cyclic }, InvalidPayloadError, /circular/i],
  [
    'a payload over the limit',
    null,
    'job',
    { everyMs: 1_000, payload: 'x'.repeat(2_000) },
    PayloadTooLargeError,
    /over the limit of 1000/,
  ],
  ['non-string headers', null, 'job', { everyMs: 1_000, headers: { n: 1 } }, InvalidOptionError, /headers/],
  ['an invalid startAt', null, 'job', { everyMs: 1_000, startAt: new Date('nope') }, InvalidOptionError, /startAt/],
  ['a 7-field cron', null, 'job', { cron: '0 0 2 * * * 2030' }, InvalidScheduleError, /7 fields: use 5, or 6/],
  [
    'a cron startAt past the Date range',
    null,
    'job',
    { cron: '0 2 * * *', startAt: 1e16 },
    InvalidOptionError,
    /Invalid startAt 10000000000000000: expected .* from 0 to 8.64e15/,
  ],
  ['an endAt past the Date range', null, 'job', { everyMs: 1_000, endAt: 9e15 }, InvalidOptionError, /endAt/],
  [
    'an everyMs whose next tick leaves the Date range',
    null,
    'job',
    { everyMs: 2 ** 53 - 1 },
    InvalidOptionError,
    /Invalid everyMs 9007199254740991: expected a whole number from 1 to 1000000000000000/,
  ],
  [
    'undefined nested in the payload',
    null,
    'job',
    { everyMs: 1_000, payload: { a: [1, undefined] } },
    InvalidPayloadError,
    /\(undefined at depth 2\)/,
  ],
  [
    'headers over the limit with the payload',
    null,
    'job',
    { everyMs: 1_000, payload: 'x', headers: { big: 'y'.repeat(1_000) } },
    PayloadTooLargeError,
    /with its headers, over the limit of 1000/,
  ],
  [
    'endAt before startAt',
    null,
    'job',
    { everyMs: 1_000, startAt: 2_000, endAt: 1_000 },
    InvalidScheduleError,
    /endAt is before startAt/,
  ],
];

describe('bad schedule input gets a typed error and changes nothing', () => {
  const fx = useRedis();
  const prefix = uniqueTopic('p');
  const index = [`{${prefix}:}:schedule-topics`, `{${prefix}:}:schedule-version`];
  let queue: RedisAckQueueService;
  let topic: string;

  const snapshot = async () => ({
    topic: await snapshotTopic(fx.redis, topic, prefix),
    index: [await fx.redis.smembers(index[0]), await fx.redis.get(index[1])],
  });

  beforeAll(async () => {
    // No scheduler runs here: a tick would change the state between two snapshots; nor does the
    // history recorder, whose flush of the push's count may land between them on a busy machine.
    queue = await fx.service({ prefix, maxPayloadBytes: 1_000, scheduler: false, history: false });
    topic = uniqueTopic();
    await queue.upsertSchedule(topic, 'job', { everyMs: 3_600_000, payload: 'kept' });
    await queue.push(topic, 'a message');
  });

  it.each(cases)('%s', async (_name, badTopic, name, options, type, text) => {
    const before = await snapshot();
    const failure = queue.upsertSchedule(badTopic ?? topic, name as string, options as ScheduleOptions);
    await expect(failure).rejects.toBeInstanceOf(type);
    await expect(failure).rejects.toThrow(text);
    expect(await snapshot()).toEqual(before);
    expect(await queue.schedules(topic)).toEqual([expect.objectContaining({ name: 'job', everyMs: 3_600_000 })]);
  });

  it('refuses a bad name on removal and a bad topic on listing, changing nothing', async () => {
    const before = await snapshot();
    await expect(queue.removeSchedule(topic, '')).rejects.toBeInstanceOf(InvalidScheduleError);
    await expect(queue.schedules('a{b}')).rejects.toBeInstanceOf(InvalidTopicError);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a bad scheduler option before anything is set up', () => {
    expect(() => new RedisAckQueueService({ connection: fx.connection, scheduler: 'yes' as never })).toThrow(
      /Invalid scheduler "yes": expected true or false/,
    );
  });

  it('fails startup on a bad schedule in the module option, changing nothing', async () => {
    const before = await snapshot();
    const app = NestFactory.createApplicationContext(
      RedisAckQueueModule.forRoot({
        connection: fx.connection,
        prefix,
        schedules: [{ topic, name: 'job', cron: 'every night' }],
      }),
      { logger: false, abortOnError: false },
    );
    await expect(app).rejects.toBeInstanceOf(InvalidScheduleError);
    expect(await snapshot()).toEqual(before);
  });

  it('accepts a schedule whose last tick is the end of the Date range', async () => {
    const last = uniqueTopic();
    const info = await queue.upsertSchedule(last, 'job', { everyMs: 1e15, startAt: 8.64e15 - 1 });
    expect(info.nextRunAt).toBe(8.64e15 - 1);
    await queue.removeSchedule(last, 'job');
  });

  it('refuses to work when a schedule key holds another type', async () => {
    const damaged = uniqueTopic();
    await fx.redis.set(`{${prefix}:${damaged}}:schedules`, 'foreign');
    const before = await snapshotTopic(fx.redis, damaged, prefix);
    await expect(queue.upsertSchedule(damaged, 'job', { everyMs: 1_000 })).rejects.toBeInstanceOf(QueueKeyTypeError);
    await expect(queue.schedules(damaged)).rejects.toBeInstanceOf(QueueKeyTypeError);
    expect(await snapshotTopic(fx.redis, damaged, prefix)).toEqual(before);
  });
});
