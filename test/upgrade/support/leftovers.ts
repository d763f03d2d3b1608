import { expectLogs } from '../../support/capture-logs';
import type { TestClient } from '../../support/queue-fixture';
import { eventually } from '../../support/queue-fixture';
import type { ReleaseContext, ReleaseQueueService } from './previous-release';

/**
 * What the scenarios ask of a service, old or new: 0.1.0's API, which the current one keeps. One side
 * leaves messages in every state, the other serves them.
 */
export type QueueSide = Pick<
  ReleaseQueueService,
  | 'push'
  | 'pushMany'
  | 'reserve'
  | 'ack'
  | 'nack'
  | 'consume'
  | 'stats'
  | 'deadLetters'
  | 'requeueDead'
  | 'get'
  | 'waitUntilIdle'
>;

/** What one delivery showed its handler, with the server's time when the handler started. */
export interface Delivery {
  id: string;
  payload: unknown;
  headers: Record<string, string>;
  attempt: number;
  maxAttempts: number;
  enqueuedAt: number;
  group: string | undefined;
  startedAt: number;
}

/** One message left behind: what its handler must see when it is served. */
interface Expected {
  payload: unknown;
  headers?: Record<string, string>;
  /** The delivery's number: 2 after a lease that expired or a retry. */
  attempt?: number;
  /** Its own maxAttempts (else the serving consumer's). */
  maxAttempts?: number;
  group?: string;
  /** Pushed (or retried) with this delay: not to start before enqueuedAt + delayMs. */
  delayMs?: number;
}

/**
 * Leases left to expire: short, so the serving side waits them out, yet longer than the few calls that follow
 * in `leaveEverything` (a reserve there must not take one back).
 */
const LEASE_MS = 1000;
/** Delayed messages and retries: long enough that the serving side starts before most of them are due. */
const DELAY_MS = 1500;
/** maxAttempts of the serving consumer (a message's own overrides it). */
export const SERVING_MAX_ATTEMPTS = 3;

/** Payloads of every JSON kind, text beyond ASCII included. */
const PLAIN_PAYLOADS: unknown[] = [
  { kind: 'plain', n: 0, nested: { list: [1, 'two', null] } },
  'a string with "quotes", a | bar and a \\ backslash',
  42.5,
  null,
  [true, false, { deep: [] }],
  { text: 'ünïcødé 🚀 和', empty: '' },
];

/** Groups, one with a name other layouts might trip on (separators, NUL-free Unicode). */
const GROUPS = { a: 'a', b: 'tenant:b|ü 7', c: 'c', d: 'd' };

/** Which ids were served by the scenario, and in which order: the start order of one consumer. */
export const ORDERED = {
  /** Ungrouped and ready at once: by priority level, then push order. */
  byPriority: ['p7-1', 'p3-1', 'p3-2', 'plain-0', 'plain-1', 'plain-2', 'plain-3', 'plain-4', 'plain-5', 'hdr-1'],
  groups: {
    [GROUPS.a]: ['ga-0', 'ga-1', 'ga-2', 'ga-3'],
    [GROUPS.b]: ['gb-0', 'gb-1', 'gb-2', 'gb-3'],
    [GROUPS.c]: ['gc-0', 'gc-1', 'gc-2'],
    [GROUPS.d]: ['gd-0'],
    gl: ['gl-1', 'gl-2'],
  } as Record<string, string[]>,
};

/** What one topic was left with: what each message's handler must see, by id, and the dead letters apart. */
export interface Leftovers {
  expected: Map<string, Expected>;
  dead: Map<string, Expected>;
}

/** The two topics of the scenario: grouped messages apart, since a change of their layout may need its own path. */
export interface ScenarioTopics {
  plain: string;
  grouped: string;
}

/**
 * Leaves a message in every state 0.1.0 knows, on topics nothing else uses. On `plain`: two dead letters (a
 * consumer whose handler fails past maxAttempts), one completed and kept (`keepCompleted` needed on `side`), one
 * retry waiting out its backoff, two leases never acked (as from a consumer that was killed), and ready ones:
 * with and without an id of their own, with priorities, with headers and maxAttempts, delayed. On `grouped`:
 * groups of several messages, delayed ones among them, and the head of a group leased and never acked.
 */
export async function leaveEverything(
  side: QueueSide,
  topics: ScenarioTopics,
): Promise<{ plain: Leftovers; grouped: Leftovers }> {
  const topic = topics.plain;
  const expected = new Map<string, Expected>();
  const dead = new Map<string, Expected>();
  const grouped = new Map<string, Expected>();

  // Dead letters first, while they are the topic's only messages, so the failing consumer takes nothing else.
  dead.set('dead-1', { payload: { kind: 'dead', n: 1 }, headers: { why: 'it fails' } });
  dead.set('dead-2', { payload: 'dies too' });
  await side.pushMany(
    topic,
    [...dead].map(([id, m]) => ({ id, payload: m.payload, headers: m.headers })),
  );
  expectLogs(/Error: boom\b/);
  const failing = side.consume(
    topic,
    () => {
      throw new Error('boom');
    },
    { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 10 }, concurrency: 2 },
  );
  await eventually(async () => (await side.stats(topic)).dead === 2, 30_000);
  await failing.close();

  // Completed and kept.
  await side.push(topic, { kind: 'done' }, { id: 'done-1' });
  const [done] = await side.reserve(topic, { count: 5 });
  expect(done.id).toBe('done-1');
  expect(await side.ack(done, { ok: true, n: 1 })).toBe(true);

  // A retry waiting out its backoff: its next delivery is its second.
  await side.push(topic, 'retry me', { id: 'retry-1', headers: { r: '1' } });
  const [retry] = await side.reserve(topic, { count: 5 });
  expect(retry.id).toBe('retry-1');
  expect(await side.nack(retry, { delayMs: DELAY_MS, error: 'again' })).toBe('retry');
  expected.set('retry-1', { payload: 'retry me', headers: { r: '1' }, attempt: 2, delayMs: DELAY_MS });

  // Leases never acked: two plain, and the head of a group whose second message must wait for it.
  await side.pushMany(topic, [
    { id: 'lease-1', payload: { kind: 'leased', n: 1 } },
    { id: 'lease-2', payload: { kind: 'leased', n: 2 }, headers: { l: '2' } },
  ]);
  const leased = await side.reserve(topic, { count: 5, leaseMs: LEASE_MS });
  expect(leased.map((m) => m.id)).toEqual(['lease-1', 'lease-2']);
  await side.pushMany(topics.grouped, [
    { id: 'gl-1', payload: { kind: 'grouped lease', n: 1 }, group: 'gl' },
    { id: 'gl-2', payload: { kind: 'grouped lease', n: 2 }, group: 'gl' },
  ]);
  const groupLeased = await side.reserve(topics.grouped, { count: 5, leaseMs: LEASE_MS });
  expect(groupLeased.map((m) => m.id)).toEqual(['gl-1']);
  expected.set('lease-1', { payload: { kind: 'leased', n: 1 }, attempt: 2 });
  expected.set('lease-2', { payload: { kind: 'leased', n: 2 }, headers: { l: '2' }, attempt: 2 });
  grouped.set('gl-1', { payload: { kind: 'grouped lease', n: 1 }, group: 'gl', attempt: 2 });
  grouped.set('gl-2', { payload: { kind: 'grouped lease', n: 2 }, group: 'gl' });

  // Ready and delayed, in one pushMany.
  PLAIN_PAYLOADS.forEach((payload, n) => expected.set(`plain-${n}`, { payload }));
  expected.set('p3-1', { payload: { level: 3, n: 1 } });
  expected.set('p3-2', { payload: { level: 3, n: 2 } });
  expected.set('p7-1', { payload: { level: 7, n: 1 } });
  expected.set('hdr-1', { payload: { kind: 'headers' }, headers: { trace: 'abc-123', 'x-ü': 'v|w' }, maxAttempts: 5 });
  expected.set('late-1', { payload: { kind: 'late', n: 1 }, delayMs: DELAY_MS });
  expected.set('late-2', {
    payload: { kind: 'late', n: 2 },
    headers: { h: 'late' },
    maxAttempts: 4,
    delayMs: DELAY_MS,
  });
  for (const [key, group] of Object.entries(GROUPS)) {
    for (const id of ORDERED.groups[group]) grouped.set(id, { payload: { group: key, id }, group });
  }
  // Delayed grouped messages: the last of group c (so its place is last whenever it becomes due) and the only
  // one of group d.
  grouped.get('gc-2')!.delayMs = DELAY_MS;
  grouped.get('gd-0')!.delayMs = DELAY_MS;
  const priorities: Record<string, number> = { 'p3-1': 3, 'p3-2': 3, 'p7-1': 7 };
  const itemsOf = (messages: [string, Expected][]) =>
    messages.map(([id, m]) => ({
      id,
      payload: m.payload,
      ...(m.headers && { headers: m.headers }),
      ...(m.maxAttempts && { maxAttempts: m.maxAttempts }),
      ...(m.group && { group: m.group }),
      ...(m.delayMs && { delayMs: m.delayMs }),
      ...(priorities[id] && { priority: priorities[id] }),
    }));
  const left = ['retry-1', 'lease-1', 'lease-2', 'gl-1', 'gl-2'];
  await side.pushMany(topic, itemsOf([...expected].filter(([id]) => !left.includes(id))));
  await side.pushMany(topics.grouped, itemsOf([...grouped].filter(([id]) => !left.includes(id))));
  // Ids the pushing side makes (their form may change between releases).
  const made = [{ payload: { kind: 'made id', n: 1 } }, { payload: { kind: 'made id', n: 2 }, headers: { m: '2' } }];
  for (const [n, { id }] of (await side.pushMany(topic, made)).entries()) expected.set(id, made[n]);
  return { plain: { expected, dead }, grouped: { expected: grouped, dead: new Map() } };
}

/** Reads what `leaveEverything` left through `side`'s look-ups, before anything is served. */
export async function inspectLeftovers(side: QueueSide, topics: ScenarioTopics): Promise<void> {
  const topic = topics.plain;
  const deadLetters = (await side.deadLetters(topic)).sort((x, y) => x.id.localeCompare(y.id));
  expect(deadLetters).toEqual([
    expect.objectContaining({
      id: 'dead-1',
      reason: 'failed',
      error: expect.stringContaining('boom') as string,
      attempt: 2,
      payload: { kind: 'dead', n: 1 },
      headers: { why: 'it fails' },
    }),
    expect.objectContaining({ id: 'dead-2', reason: 'failed', attempt: 2, payload: 'dies too', headers: {} }),
  ]);
  expect(await side.get(topic, 'dead-2')).toMatchObject({ state: 'dead', payload: 'dies too' });
  expect(await side.get(topic, 'done-1')).toMatchObject({ state: 'completed', result: { ok: true, n: 1 } });
  expect(await side.get(topic, 'retry-1')).toMatchObject({ state: 'delayed', attempt: 1, payload: 'retry me' });
  expect(await side.get(topic, 'hdr-1')).toMatchObject({
    state: 'ready',
    payload: { kind: 'headers' },
    headers: { trace: 'abc-123', 'x-ü': 'v|w' },
    maxAttempts: 5,
  });
  expect(await side.get(topic, 'p7-1')).toMatchObject({ state: 'ready', priority: 7 });
  const late = (await side.get(topic, 'late-2'))!;
  expect(late).toMatchObject({ state: 'delayed', headers: { h: 'late' }, maxAttempts: 4 });
  expect(late.dueAt! - late.enqueuedAt!).toBe(DELAY_MS);
  expect(await side.get(topics.grouped, 'gc-2')).toMatchObject({ state: 'delayed', group: GROUPS.c });
  expect(await side.get(topics.grouped, 'gb-1')).toMatchObject({
    state: 'ready',
    group: GROUPS.b,
    payload: { group: 'b', id: 'gb-1' },
  });
  expect(await side.get(topics.grouped, 'gl-2')).toMatchObject({ state: 'ready', group: 'gl' });
  expect(await side.stats(topic)).toMatchObject({ dead: 2 });
}

/**
 * Serves what `leaveEverything` left with one consumer of `side` (one message at a time, so its start order is
 * the queue's order), then requeues the dead letters and serves them; returns every delivery, in start order.
 * `current`, a service of the current code, says when the topic is idle: one of the previous release counts the
 * current code's encoding anchor in `:leased` as a lease (docs/upgrading.md), so its `waitUntilIdle` would wait on.
 */
export async function serveLeftovers(
  side: QueueSide,
  topic: string,
  redis: TestClient,
  leftovers: Leftovers,
  current: QueueSide,
): Promise<Delivery[]> {
  const deliveries: Delivery[] = [];
  const consumer = side.consume(
    topic,
    async (payload: unknown, context: ReleaseContext) => {
      const [seconds, micros] = await redis.time();
      const { id, headers, attempt, maxAttempts, enqueuedAt, group } = context;
      deliveries.push({
        id,
        payload,
        headers,
        attempt,
        maxAttempts,
        enqueuedAt,
        group,
        startedAt: toMs(seconds, micros),
      });
    },
    { concurrency: 1, maxAttempts: SERVING_MAX_ATTEMPTS },
  );
  const served = (ids: Iterable<string>) => [...ids].every((id) => deliveries.some((d) => d.id === id));
  await eventually(() => served(leftovers.expected.keys()), 30_000);
  if (leftovers.dead.size > 0) {
    expect(await side.requeueDead(topic, [...leftovers.dead.keys()])).toBe(leftovers.dead.size);
    await eventually(() => served(leftovers.dead.keys()), 30_000);
  }
  await current.waitUntilIdle(topic);
  await consumer.close();
  expect(await current.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0, dead: 0 });
  return deliveries;
}

/** Checks each delivery against what was left: exactly once, as stored, in order, none early. */
export function checkDeliveries(deliveries: Delivery[], leftovers: Leftovers): void {
  const all = new Map([...leftovers.expected, ...leftovers.dead]);
  expect(deliveries.map((d) => d.id).sort()).toEqual([...all.keys()].sort());
  for (const delivery of deliveries) {
    const want = all.get(delivery.id)!;
    // The id first, so that a failure names the message.
    expect(delivery).toMatchObject({
      id: delivery.id,
      payload: want.payload,
      headers: want.headers ?? {},
      // A requeued dead letter starts its attempts again.
      attempt: want.attempt ?? 1,
      maxAttempts: want.maxAttempts ?? SERVING_MAX_ATTEMPTS,
      group: want.group,
    });
    if (want.delayMs) expect(delivery.startedAt).toBeGreaterThanOrEqual(delivery.enqueuedAt + want.delayMs);
  }
  const order = deliveries.map((d) => d.id);
  for (const ids of [ORDERED.byPriority, ...Object.values(ORDERED.groups)]) {
    if (all.has(ids[0])) expect(order.filter((id) => ids.includes(id))).toEqual(ids);
  }
}

function toMs(seconds: string | number, micros: string | number): number {
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
