import { inspect } from 'node:util';
import type { RedisAckQueueService } from '../../lib';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

/** Placed in payload values, payload keys and header values: no refusal may carry it anywhere. */
const SECRET = 'S3CRET-7f1c';

const cyclic: Record<string, unknown> = { [SECRET]: 1 };
cyclic.self = cyclic;

type Refusal = [name: string, call: (q: RedisAckQueueService, topic: string) => Promise<unknown>];

const refusals: Refusal[] = [
  ['a string where a push item goes', (q, t) => q.pushMany(t, [`${SECRET} the payload` as never])],
  ['a NaN under a secret key', (q, t) => q.push(t, { a: { [SECRET]: NaN } })],
  ['undefined under a secret key', (q, t) => q.push(t, { [SECRET]: undefined })],
  ['a function beside a secret value', (q, t) => q.push(t, { v: SECRET, [SECRET]: () => 1 })],
  ['a Map under a secret key', (q, t) => q.push(t, [{ [SECRET]: new Map([[SECRET, SECRET]]) }])],
  ['a BigInt under a secret key', (q, t) => q.push(t, { [SECRET]: 1n })],
  ['a cycle through a secret key', (q, t) => q.push(t, cyclic)],
  [
    'a toJSON that throws a secret',
    (q, t) =>
      q.push(t, {
        toJSON() {
          throw new Error(SECRET);
        },
      }),
  ],
  ['headers with a non-string value', (q, t) => q.push(t, 1, { headers: { authorization: SECRET, n: 1 } as never })],
  ['headers that are not a plain object', (q, t) => q.push(t, 1, { headers: [SECRET] as never })],
  ['a payload over the limit', (q, t) => q.push(t, SECRET.repeat(200))],
  ['a header over the limit', (q, t) => q.push(t, 1, { headers: { authorization: SECRET.repeat(200) } })],
  ['an id that is an object', (q, t) => q.push(t, 1, { id: { [SECRET]: SECRET } as never })],
  ['a topic that is an object', (q) => q.push({ [SECRET]: SECRET } as never, 1)],
  ['a message that is a string', (q) => q.ack(SECRET as never)],
  ['a message without a token', (q, t) => q.ack({ topic: t, id: 'a', payload: SECRET } as never)],
  [
    'a schedule payload with a NaN',
    (q, t) => q.upsertSchedule(t, 'job', { everyMs: 1_000, payload: { [SECRET]: NaN } }),
  ],
  [
    'schedule headers with a non-string value',
    (q, t) => q.upsertSchedule(t, 'job', { everyMs: 1_000, headers: { authorization: SECRET, n: 2 } as never }),
  ],
];

/** Every way an error reaches a log or a response. */
function renderings(error: unknown): string[] {
  const e = error as Error;
  return [inspect(e, { depth: Infinity }), JSON.stringify(e), String(e.stack), String(e.cause), e.message];
}

describe('refusals never carry payload data, payload keys or header values', () => {
  const fx = useRedis();
  let queue: RedisAckQueueService;

  beforeAll(async () => {
    queue = await fx.service({ maxPayloadBytes: 1_000, scheduler: false });
  });

  it.each(refusals)('%s', async (_name, call) => {
    const error = await call(queue, uniqueTopic()).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(Error);
    for (const text of renderings(error)) expect(text).not.toContain(SECRET.slice(0, 6));
  });

  it('a result under a secret key that JSON would change (keepCompleted)', async () => {
    const kept = await fx.service({ keepCompleted: true });
    const topic = uniqueTopic();
    await kept.push(topic, 1);
    const [message] = await kept.reserve(topic);
    for (const result of [{ [SECRET]: NaN }, { a: [{ [SECRET]: undefined }] }, { [SECRET]: () => SECRET }]) {
      const error = await kept.ack(message, result).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/at depth \d/);
      for (const text of renderings(error)) expect(text).not.toContain(SECRET.slice(0, 6));
    }
  });
});
