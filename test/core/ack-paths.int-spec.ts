import {
  type MessageContext,
  MessageRejectedError,
  type QueueConsumer,
  type QueueHandlerFn,
  type RedisAckQueueEvent,
  type RedisAckQueueService,
  type ReservedMessage,
} from '../../lib';
import { partitionOf } from '../../lib/engine/keys/partitions';
import { expectLogs } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * Every path that ends a lease, on every layout a topic can have: each message runs as often as
 * its path says (once, or twice where it asks for another delivery) and ends as it says (acked,
 * completed or dead), its lease never refused. A lease lives in its group's partition, not its
 * id's: on a grouped partitioned topic every id here routes elsewhere than its group, so a path
 * that routed by id alone would send the ack to the wrong partition.
 */

interface Layout {
  name: string;
  partitions: number;
  /** The groups its messages take turns in; none for an ungrouped topic. */
  groups?: string[];
}

const LAYOUTS: Layout[] = [
  { name: 'a plain topic', partitions: 1 },
  { name: 'a partitioned topic', partitions: 4 },
  { name: 'ordered groups', partitions: 1, groups: ['g-a', 'g-b'] },
  { name: 'ordered groups on a partitioned topic', partitions: 4, groups: ['g-a', 'g-b'] },
];

/** Messages per case: two per group, so a group whose head is never acked blocks its second. */
const COUNT = 4;

/** How a message ends: gone (acked), kept as completed with its result, or in the dead letters. */
type End = 'acked' | 'completed' | 'dead';

/** What a case has to work with. */
interface Case {
  queue: RedisAckQueueService;
  topic: string;
  /** The ids pushed (or the flow's children), in push order. */
  ids: string[];
  /** Handler runs (or hand deliveries) per id. */
  runs: Map<string, number>;
}

interface AckPath {
  name: string;
  /** The topic keeps completed messages (its acks go through complete.lua). */
  keepCompleted?: boolean;
  /** Deliveries each message takes. */
  runs: number;
  ends: End;
  /** Of a completed message: its result is its id. */
  resultIsId?: boolean;
  /** The messages' own maxAttempts. */
  maxAttempts?: number;
  /** Pushes the case's messages itself (a flow); else they are pushed plainly. */
  pushes?: (c: Case, group: (n: number) => string | undefined) => Promise<void>;
  /** Runs the messages to their ends. */
  run: (c: Case) => Promise<void>;
}

/** A handler that counts its runs per id, then does `then`. */
function counting<R>(c: Case, then: (payload: unknown, context: MessageContext) => R | Promise<R>) {
  return (payload: unknown, context: MessageContext) => {
    c.runs.set(context.id, (c.runs.get(context.id) ?? 0) + 1);
    return then(payload, context);
  };
}

/**
 * Resolves once every id had its end event (`acked` or `dead`), or at the first lease its
 * consumer found refused (`lease-lost`) or call that failed (`error`): those are what the
 * case's checks then report.
 */
function endsOf(queue: RedisAckQueueService, topic: string, ids: string[]): Promise<RedisAckQueueEvent[]> {
  const seen: RedisAckQueueEvent[] = [];
  return new Promise((resolve) => {
    const subscription = queue.events$.subscribe((event) => {
      if (event.topic !== topic || !['acked', 'dead', 'lease-lost', 'error'].includes(event.type)) return;
      seen.push(event);
      const ended = new Set(seen.filter((e) => e.type === 'acked' || e.type === 'dead').map((e) => e.id));
      if (event.type === 'lease-lost' || event.type === 'error' || ids.every((id) => ended.has(id))) {
        subscription.unsubscribe();
        resolve(seen);
      }
    });
  });
}

/** A consumer's options here: a lease that never runs out while the case runs. */
const CONSUMER = { concurrency: 4, leaseMs: 600_000 };

/** Runs the consumer `start` starts until every message ended; no lease was refused. */
async function consumeToEnd(c: Case, start: () => QueueConsumer) {
  const ends = endsOf(c.queue, c.topic, c.ids);
  const consumer = start();
  const events = await ends;
  await consumer.close();
  expect(events.filter((e) => e.type === 'lease-lost' || e.type === 'error')).toEqual([]);
}

/** Runs `handler` as the case's consumer (see consumeToEnd). */
const handleToEnd = (c: Case, handler: QueueHandlerFn) =>
  consumeToEnd(c, () => c.queue.consume(c.topic, handler, CONSUMER));

/** Runs a batch handler that counts its messages' runs (see consumeToEnd). */
const batchesToEnd = (c: Case) =>
  consumeToEnd(c, () =>
    c.queue.consume(
      c.topic,
      (messages) => {
        for (const { id } of messages) c.runs.set(id, (c.runs.get(id) ?? 0) + 1);
      },
      { ...CONSUMER, batch: { maxSize: COUNT, maxWaitMs: 50 } },
    ),
  );

/** Reserves by hand until `act` saw every delivery the case expects. */
async function reserveToEnd(c: Case, deliveries: number, act: (message: ReservedMessage) => Promise<void>) {
  let seen = 0;
  while (seen < deliveries) {
    const batch = await eventually(async () => {
      const leased = await c.queue.reserve(c.topic, { count: 10, leaseMs: 600_000 });
      return leased.length > 0 ? leased : undefined;
    });
    for (const message of batch!) {
      c.runs.set(message.id, (c.runs.get(message.id) ?? 0) + 1);
      seen += 1;
      await act(message);
    }
  }
}

/** A flow: a parent on its own plain topic, the case's messages its children. */
async function pushFlowOfChildren(c: Case, group: (n: number) => string | undefined): Promise<void> {
  await c.queue.pushFlow({
    topic: parentOf(c.topic),
    id: 'parent',
    payload: 'parent',
    children: c.ids.map((id, n) => ({ topic: c.topic, id, payload: n, options: { group: group(n) } })),
  });
}

/** The parent of pushFlowOfChildren ran once, with every child's result (its id). */
async function expectParentRanOnce(c: Case) {
  const parentTopic = parentOf(c.topic);
  const results: unknown[] = [];
  const ended = endsOf(c.queue, parentTopic, ['parent']);
  const consumer = c.queue.consume(parentTopic, (_payload, context) => void results.push(context.childResults()));
  expect((await ended).map((e) => e.type)).toEqual(['acked']);
  await consumer.close();
  expect(results).toEqual([{ [c.topic]: Object.fromEntries(c.ids.map((id) => [id, id])) }]);
}

const parents = new Map<string, string>();
/** The flow parent's topic of a case's topic. */
function parentOf(topic: string): string {
  if (!parents.has(topic)) parents.set(topic, uniqueTopic('parent'));
  return parents.get(topic)!;
}

const PATHS: AckPath[] = [
  {
    name: 'a handler that returns (acks batched, or riding along with a reserve)',
    runs: 1,
    ends: 'acked',
    run: (c) =>
      handleToEnd(
        c,
        counting(c, () => undefined),
      ),
  },
  {
    name: 'a handler that returns a result, on a topic that keeps completed messages',
    keepCompleted: true,
    resultIsId: true,
    runs: 1,
    ends: 'completed',
    run: (c) =>
      handleToEnd(
        c,
        counting(c, (_payload, context) => context.id),
      ),
  },
  {
    name: 'a handler that called context.progress()',
    runs: 1,
    ends: 'acked',
    run: (c) =>
      handleToEnd(
        c,
        counting(c, async (_payload, context) => {
          const { id } = context;
          const stored = eventOf(c.queue, c.topic, 'progress', id);
          context.progress({ done: 50 });
          await stored;
        }),
      ),
  },
  {
    name: "a flow child's handler, its result handed to the parent",
    runs: 1,
    ends: 'acked',
    pushes: pushFlowOfChildren,
    run: async (c) => {
      await handleToEnd(
        c,
        counting(c, (_payload, context) => context.id),
      );
      await expectParentRanOnce(c);
    },
  },
  {
    name: 'a batch handler',
    runs: 1,
    ends: 'acked',
    run: batchesToEnd,
  },
  {
    name: 'a batch handler, on a topic that keeps completed messages',
    keepCompleted: true,
    runs: 1,
    ends: 'completed',
    run: batchesToEnd,
  },
  {
    name: 'a handler that extends its lease, then returns',
    runs: 1,
    ends: 'acked',
    run: (c) =>
      handleToEnd(
        c,
        counting(c, async (_payload, context) => {
          expect(await context.extendLease(600_000)).toBe(true);
        }),
      ),
  },
  {
    name: 'a handler that fails once (nack, retried), then returns',
    runs: 2,
    ends: 'acked',
    run: (c) =>
      handleToEnd(
        c,
        counting(c, (_payload, context) => {
          if (context.attempt === 1) throw new Error('first attempt fails');
        }),
      ),
  },
  {
    name: 'a handler that asks to retry later once (defer), then returns',
    runs: 2,
    ends: 'acked',
    run: (c) =>
      handleToEnd(
        c,
        counting(c, (_payload, context) => {
          if (c.runs.get(context.id) === 1) context.retryLater(0);
        }),
      ),
  },
  {
    name: 'a handler that rejects its message (bury)',
    runs: 1,
    ends: 'dead',
    run: (c) =>
      handleToEnd(
        c,
        counting(c, () => {
          throw new MessageRejectedError('refused by the test');
        }),
      ),
  },
  {
    name: 'a handler that fails its last attempt (nack to the dead letters)',
    maxAttempts: 1,
    runs: 1,
    ends: 'dead',
    run: (c) =>
      handleToEnd(
        c,
        counting(c, () => {
          throw new Error('always fails');
        }),
      ),
  },
  {
    name: 'reserve, extendLease and ack by hand',
    runs: 1,
    ends: 'acked',
    run: (c) =>
      reserveToEnd(c, COUNT, async (message) => {
        expect(await c.queue.extendLease(message, 600_000)).toBe(true);
        expect(await c.queue.ack(message)).toBe(true);
      }),
  },
  {
    name: 'ack(message, result) by hand, on a topic that keeps completed messages',
    keepCompleted: true,
    resultIsId: true,
    runs: 1,
    ends: 'completed',
    run: (c) =>
      reserveToEnd(c, COUNT, async (message) => {
        expect(await c.queue.ack(message, message.id)).toBe(true);
      }),
  },
  {
    name: "ack(message, result) by hand of a flow's child",
    runs: 1,
    ends: 'acked',
    pushes: pushFlowOfChildren,
    run: async (c) => {
      await reserveToEnd(c, COUNT, async (message) => {
        expect(await c.queue.ack(message, message.id)).toBe(true);
      });
      await expectParentRanOnce(c);
    },
  },
  {
    name: 'nack by hand (retried), then ack',
    runs: 2,
    ends: 'acked',
    run: (c) =>
      reserveToEnd(c, 2 * COUNT, async (message) => {
        if (c.runs.get(message.id) === 1) expect(await c.queue.nack(message, { delayMs: 0 })).toBe('retry');
        else expect(await c.queue.ack(message)).toBe(true);
      }),
  },
  {
    name: 'release by hand, then ack',
    runs: 2,
    ends: 'acked',
    run: (c) =>
      reserveToEnd(c, 2 * COUNT, async (message) => {
        if (c.runs.get(message.id) === 1) expect(await c.queue.release(message)).toBe(true);
        else expect(await c.queue.ack(message)).toBe(true);
      }),
  },
  {
    name: 'nack by hand of a last attempt (to the dead letters)',
    maxAttempts: 1,
    runs: 1,
    ends: 'dead',
    run: (c) =>
      reserveToEnd(c, COUNT, async (message) => {
        expect(await c.queue.nack(message, { delayMs: 0 })).toBe('dead');
      }),
  },
];

/** Resolves on `type`'s event for `id` of `topic`. */
function eventOf(queue: RedisAckQueueService, topic: string, type: RedisAckQueueEvent['type'], id: string) {
  return new Promise<void>((resolve) => {
    const subscription = queue.events$.subscribe((event) => {
      if (event.topic === topic && event.type === type && event.id === id) {
        subscription.unsubscribe();
        resolve();
      }
    });
  });
}

/**
 * `count` ids for `topic`, `<topic>/<n>` (plus `.k` where needed): of a grouped partitioned
 * topic, each routes by its id to another partition than its group's.
 */
function idsFor(topic: string, layout: Layout, group: (n: number) => string | undefined): string[] {
  return Array.from({ length: COUNT }, (_, n) => {
    const home = group(n);
    for (let k = 0; ; k++) {
      const id = `${topic}/${n}${k === 0 ? '' : `.${k}`}`;
      if (!home || layout.partitions === 1) return id;
      if (partitionOf(id, layout.partitions) !== partitionOf(home, layout.partitions)) return id;
    }
  });
}

describe('every ack path on every layout', () => {
  const fx = useRedis();
  expectLogs(/failed on attempt/, /went to the dead letters as/);

  describe.each(LAYOUTS)('on $name', (layout) => {
    it.each(PATHS)('$name', async (path) => {
      const topic = uniqueTopic('acks');
      const keepCompleted = path.keepCompleted ?? false;
      const queue = await fx.service({
        topics: { [topic]: { partitions: layout.partitions, keepCompleted } },
        backoff: { type: 'fixed', delayMs: 10 },
      });
      const group = (n: number) => layout.groups?.[n % layout.groups.length];
      const c: Case = { queue, topic, ids: idsFor(topic, layout, group), runs: new Map() };
      if (path.pushes) await path.pushes(c, group);
      else {
        const { maxAttempts } = path;
        await queue.pushMany(
          topic,
          c.ids.map((id, n) => ({ id, payload: n, group: group(n), maxAttempts })),
        );
      }

      await path.run(c);

      expect(Object.fromEntries(c.runs)).toEqual(Object.fromEntries(c.ids.map((id) => [id, path.runs])));
      expect(await queue.stats(topic)).toMatchObject({ ready: 0, delayed: 0, leased: 0 });
      for (const id of c.ids) {
        const info = await queue.get(topic, id);
        if (path.ends === 'acked') expect(info).toBeNull();
        else if (path.ends === 'completed') {
          expect(info).toMatchObject({ state: 'completed' });
          if (path.resultIsId) expect(info!.result).toBe(id);
        } else expect(info).toMatchObject({ state: 'dead' });
      }
    });
  });
});
