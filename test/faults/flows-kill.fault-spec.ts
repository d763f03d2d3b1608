import type { ChildProcess } from 'node:child_process';
import { RedisAckQueueService, type Flow } from '../../lib';
import { ConsumerProcesses, type ConsumerEvent } from '../support/consumer-processes';
import {
  FaultLedger,
  faultSeed,
  hold,
  leftovers,
  NOTHING_LEFT,
  printSummary,
  seededRandom,
} from '../support/fault-ledger';
import { eventually, snapshotTopic, type TestClient, uniqueTopic, useRedis } from '../support/queue-fixture';
import { ReplyDroppingProxy } from '../support/reply-dropping-proxy';
import { RedisCluster } from '../../support/redis-processes/redis-cluster';
import type { RedisServer } from '../../support/redis-processes/redis-server';

const FLOWS = 1_000;
/** The flows pushed together, one round every ROUND_MS: the consumers work while flows still come. */
const PER_ROUND = 25;
const ROUND_MS = 100;
const KILLS = 8;

/** The three topics of every flow: parents, middle nodes (parents and children), leaves. */
interface FlowTopics {
  parent: string;
  middle: string;
  child: string;
}

/** What a node with children must see: each child's topic and id. */
type Expected = Map<string, { topic: string; id: string }[]>;

/**
 * Flow i: a parent on P with 2 or 3 leaves on C, and every third flow a middle node on M with
 * two leaves of its own. Each child's handler returns `{ value: '<id>!', pid, attempt }`; each
 * node with children reports what `childResults()` gave it.
 */
function flowOf(i: number, { parent, middle, child }: FlowTopics): Flow {
  const leaf = (id: string): Flow => ({ topic: child, id, payload: { result: `${id}!` } });
  const children: Flow[] = [leaf(`c-${i}-0`), leaf(`c-${i}-1`), ...(i % 2 === 1 ? [leaf(`c-${i}-2`)] : [])];
  if (i % 3 === 0) {
    children.push({
      topic: middle,
      id: `m-${i}`,
      payload: { result: `m-${i}!`, reportChildren: true },
      children: [leaf(`g-${i}-0`), leaf(`g-${i}-1`)],
    });
  }
  return { topic: parent, id: `p-${i}`, payload: { reportChildren: true }, children };
}

function idsOf(flow: Flow, into: Expected, all: string[]): void {
  all.push(flow.id!);
  if (!flow.children?.length) return;
  into.set(
    flow.id!,
    flow.children.map(({ topic, id }) => ({ topic, id: id! })),
  );
  for (const child of flow.children) idsOf(child, into, all);
}

/**
 * Each run of a node with children against what it must have seen: every child's result, from
 * a run of that child that had finished (its done line) before this run started. A result
 * exists only once its child was acked (complete.lua writes it with the ack), so this is "no
 * parent ran before all its children were acked", shown from the processes' own lines.
 */
function parentRunProblems(events: ConsumerEvent[], expected: Expected): string[] {
  const done = new Map<string, ConsumerEvent>();
  for (const e of events) if (e.type === 'done') done.set(`${e.pid}/${e.id}/${e.attempt}`, e);
  const problems: string[] = [];
  for (const start of events) {
    if (start.type !== 'start' || !expected.has(start.id!)) continue;
    const run = `${start.id} (pid ${start.pid}, attempt ${start.attempt})`;
    const children = expected.get(start.id!)!;
    const seen = start.children ?? {};
    const count = Object.values(seen).reduce((n, byId) => n + Object.keys(byId).length, 0);
    if (count !== children.length) problems.push(`${run} saw ${count} child results of ${children.length}`);
    if (start.failed?.length) problems.push(`${run} saw failed children: ${JSON.stringify(start.failed)}`);
    for (const { topic, id } of children) {
      const result = seen[topic]?.[id] as { value: string; pid: number; attempt: number } | undefined;
      if (result?.value !== `${id}!`) {
        problems.push(`${run} started without the result of ${id}: ${JSON.stringify(result)}`);
        continue;
      }
      const childDone = done.get(`${result.pid}/${id}/${result.attempt}`);
      if (!childDone) problems.push(`${run} saw a result of ${id} from a run that never finished`);
      else if (childDone.now! > start.now!) problems.push(`${run} started before ${id}'s run finished`);
    }
  }
  return problems;
}

/** A flow's keys of a topic that are still there, the `:flow-sequence` counter aside. */
async function flowKeysLeft(redis: TestClient, topic: string): Promise<string[]> {
  const tag = `{ackq:${topic}}`;
  return Object.keys(await snapshotTopic(redis, topic)).filter((key) =>
    /^:flow(?!-sequence$)/.test(key.slice(tag.length)),
  );
}

/**
 * 1,000 flows pushed in rounds while consumer processes of all three topics are SIGKILLed (and
 * replaced); several kills land right after a process finished a child's handler, between its
 * ack and its parent's notify. Checked from the processes' lines and Redis: every node handled,
 * extra runs explained by a kill or a lost lease (the fault ledger's rules), every parent's run
 * saw every child's result, and nothing of any flow is left.
 */
async function flowsUnderKills(where: Where, name: string): Promise<void> {
  const [parent, middle, child] = await where.topics(['flow-parent', 'flow-middle', 'flow-child']);
  const topics = { parent, middle, child };
  const { redis } = where;
  const producer = await where.service();
  const seed = faultSeed();
  const random = seededRandom(seed);
  const ledger = new FaultLedger();
  const processes = new ConsumerProcesses({
    ...where.env,
    TOPICS: [topics.parent, topics.middle, topics.child].join(','),
    LEASE_MS: '1000',
    HANDLER_MS: '10',
    CONCURRENCY: '4',
    // Kills, not failures: no message may die of the deliveries its killed owners used up.
    MAX_ATTEMPTS: '100',
  });
  const flows = Array.from({ length: FLOWS }, (_, i) => flowOf(i, topics));
  const expected: Expected = new Map();
  const all: string[] = [];
  for (const flow of flows) idsOf(flow, expected, all);
  const started = Date.now();
  try {
    await Promise.all([processes.start(), processes.start(), processes.start()]);
    let pushedMs = 0;
    const producing = (async () => {
      for (let first = 0; first < FLOWS; first += PER_ROUND) {
        const round = hold(ROUND_MS);
        await Promise.all(
          flows.slice(first, first + PER_ROUND).map(async (flow) => {
            const tree = await producer.pushFlow(flow);
            const stored: string[] = [];
            const visit = (node: typeof tree) => {
              if (!node.duplicate) stored.push(node.id);
              node.children.forEach(visit);
            };
            visit(tree);
            ledger.pushedIds(stored);
          }),
        );
        await round;
      }
    })().then(() => (pushedMs = Date.now() - started));

    let killedAfterDone = 0;
    const replacements: Promise<unknown>[] = [];
    for (let k = 0; k < KILLS; k++) {
      await hold(200 + Math.floor(random() * 500));
      // A victim among the processes that are consuming (a replacement may still be starting);
      // two of them at least, so that one is left.
      const consuming = () => {
        const ready = new Set(processes.of('ready').map((e) => e.pid));
        return processes.alive().filter((child) => ready.has(child.pid!));
      };
      while (consuming().length < 2) {
        const since = Date.now();
        await processes.waitFor((e) => e.type === 'ready' && e.receivedAt! >= since, 30_000, 'a replacement ready');
      }
      const alive = consuming();
      const victim: ChildProcess = alive[Math.floor(random() * alive.length)];
      // Most kills wait for the victim to finish a child's handler: its ack and its parent's
      // notify are then under way.
      if (k % 4 !== 3) {
        const since = Date.now();
        const finished = await processes
          .waitFor(
            (e) => e.type === 'done' && e.pid === victim.pid && e.topic !== topics.parent && e.receivedAt! >= since,
            2_000,
          )
          .catch(() => undefined);
        if (finished) killedAfterDone++;
      }
      await processes.kill(victim, 'SIGKILL');
      ledger.kill(`pid:${victim.pid}`);
      replacements.push(processes.start());
    }
    await Promise.all(replacements);
    const killsMs = Date.now() - started;
    await producing;

    // No parent stuck: every message of every topic gone, and every flow key but the counters.
    const names = [topics.parent, topics.middle, topics.child];
    let left: Record<string, unknown> = {};
    const nothingLeft = async () => {
      left = {};
      for (const topic of names) {
        const messages = await redis.hlen(`{ackq:${topic}}:messages`);
        const keys = messages > 0 ? [] : await flowKeysLeft(redis, topic);
        if (messages > 0 || keys.length > 0) left[topic] = { messages, keys };
      }
      return Object.keys(left).length === 0;
    };
    await eventually(nothingLeft, 90_000, 250).catch(async () => {
      const waiting = await redis.zcard(`{ackq:${topics.parent}}:flow-waiting`);
      throw new Error(`left after 90 s (seed ${seed}, parents waiting ${waiting}): ${JSON.stringify(left)}`);
    });
    const doneMs = Date.now() - started;
    // Nothing left in Redis; the last acks' reports may still be on their way through the pipes.
    await processes.waitForEndReports(ledger.pushed);
    const lastRunMs = Math.max(...processes.of('done').map((e) => e.receivedAt!)) - started;

    ledger.fromProcesses(processes.events);
    const tally = ledger.tally({ leftInRedis: [] });
    const parentProblems = parentRunProblems(processes.events, expected);
    printSummary(name, tally, { seed, pushedMs, killsMs, lastRunMs, doneMs, killedAfterDone, ...ledger.counters() });
    expect({ seed, violations: tally.violations }).toEqual({ seed, violations: [] });
    expect({ seed, parentProblems }).toEqual({ seed, parentProblems: [] });
    expect(tally.pushed).toBe(all.length);
    expect(tally.handled).toBe(all.length);
    expect(tally.lost).toBe(0);
    for (const topic of names) expect(await leftovers(redis, topic)).toEqual(NOTHING_LEFT);
  } finally {
    await processes.stopAll();
  }
}

/**
 * Children whose last lease ran out in Redis: the reserve that finds them expired sends them to
 * the dead letters and writes each end to the child's outbox in the same step, but no process
 * passes it on, as when a process dies between a child's end and its parent's notify. A consumer
 * of the child topic alone, which never runs a message there, passes them with its sweeper: the
 * parents (their children `onChildFailure: 'continue'`) become ready, then run once, each child
 * listed as failed.
 */
async function unpassedChildEnds(where: Where): Promise<void> {
  const [parent, child] = await where.topics(['flow-parent', 'flow-child']);
  const { redis } = where;
  const queue = await where.service();
  const parents = ['p-0', 'p-1', 'p-2'];
  const childrenOf = (p: string) => [0, 1, 2].map((j) => `c-${p.slice(2)}-${j}`);
  for (const id of parents) {
    await queue.pushFlow({
      topic: parent,
      id,
      payload: { reportChildren: true },
      children: childrenOf(id).map((c) => ({
        topic: child,
        id: c,
        payload: {},
        options: { maxAttempts: 1, onChildFailure: 'continue' as const },
      })),
    });
  }
  // Leased by hand and never settled: their one attempt's lease runs out.
  const reserved = await queue.reserve(child, { count: 9, leaseMs: 50 });
  expect(reserved.map(({ id }) => id).sort()).toEqual(parents.flatMap(childrenOf).sort());
  const outbox = `{ackq:${child}}:flow-outbox`;
  for (const id of parents) expect((await queue.get(parent, id))?.state).toBe('waiting-children');

  const processes = new ConsumerProcesses({ ...where.env, LEASE_MS: '5000', HANDLER_MS: '10' });
  try {
    await processes.start({ TOPICS: child });
    const states = async () => Promise.all(parents.map(async (id) => (await queue.get(parent, id))?.state));
    await eventually(
      async () =>
        (await queue.stats(child)).dead === 9 &&
        (await redis.hlen(outbox)) === 0 &&
        (await states()).every((state) => state === 'ready'),
      30_000,
      100,
    );
    // Its consumer had nothing to run: its reserve buried them, its sweeper passed the ends.
    expect(processes.of('start')).toEqual([]);

    await processes.start({ TOPICS: parent });
    await eventually(async () => (await redis.hlen(`{ackq:${parent}}:messages`)) === 0, 30_000, 100);
    const runs = processes.of('start').filter((e) => e.topic === parent);
    expect(runs.map((e) => e.id).sort()).toEqual(parents);
    for (const run of runs) {
      expect(run.children).toEqual({});
      expect(run.failed).toEqual(
        childrenOf(run.id!).map((c) => expect.objectContaining({ topic: child, id: c, reason: 'expired' }) as unknown),
      );
    }
    await queue.purgeDead(child);
    for (const topic of [parent, child]) {
      expect(await leftovers(redis, topic)).toEqual(NOTHING_LEFT);
      expect(await flowKeysLeft(redis, topic)).toEqual([]);
    }
  } finally {
    await processes.stopAll();
  }
}

/** Where a scenario runs: one server, or a Cluster whose masters each hold one of its topics. */
interface Where {
  env: Record<string, string>;
  redis: TestClient;
  /**
   * A new service (closed after the file). Its calls wait up to a minute: they run beside three
   * consuming processes on a machine that may be loaded, and how long a push waits is not what
   * these tests check.
   */
  service(): Promise<RedisAckQueueService>;
  /** New topics named after `names`; on a cluster, each on a master of its own. */
  topics(names: string[]): Promise<string[]>;
}

describe('fault: flows under SIGKILL of their consumers', () => {
  const fx = useRedis();

  describe('on one server', () => {
    const where: Where = {
      get env() {
        return fx.consumerEnv;
      },
      get redis() {
        return fx.redis;
      },
      service: () => fx.service({ commandTimeoutMs: 60_000 }),
      topics: (names) => Promise.resolve(names.map((name) => uniqueTopic(name))),
    };

    it('1,000 flows over three topics: each parent runs once its children were acked, none stuck', async () => {
      await flowsUnderKills(where, 'flows-sigkill');
    }, 150_000);

    it('children whose last lease ran out in Redis, their ends never passed on: the sweeper of a consumer of the child topic passes them', async () => {
      await unpassedChildEnds(where);
    }, 90_000);

    it('a consumer killed right after its child ack ran in Redis: another process passes the end, the parent runs once with the result', async () => {
      const [parent, child] = await where.topics(['flow-parent', 'flow-child']);
      const queue = await fx.service();
      const proxy = await ReplyDroppingProxy.start(fx.server.port);
      const processes = new ConsumerProcesses({ ...fx.consumerEnv, LEASE_MS: '2000', HANDLER_MS: '10' });
      try {
        const doomed = await processes.start({ REDIS_URL: proxy.url, TOPICS: child });
        // The child's result carries the marker: its ack (complete.lua) runs in Redis, the
        // process never hears back nor reaches Redis again, and is killed.
        const marker = `marker-${Date.now()}`;
        proxy.dropReplyTo(marker, { thenCutOff: true });
        await queue.pushFlow({
          topic: parent,
          id: 'p',
          payload: { reportChildren: true },
          children: [
            { topic: child, id: 'c-0', payload: { result: 'c-0!' } },
            { topic: child, id: 'c-1', payload: { result: marker } },
          ],
        });
        await eventually(() => proxy.dropped === 1, 30_000);
        await processes.kill(doomed, 'SIGKILL');
        expect(await queue.get(child, 'c-1')).toBeNull();
        expect(await fx.redis.hexists(`{ackq:${child}}:flow-outbox`, 'c-1')).toBe(1);
        expect((await queue.get(parent, 'p'))?.state).toBe('waiting-children');

        await processes.start({ TOPICS: [child, parent].join(',') });
        const run = await processes.waitFor((e) => e.type === 'start' && e.id === 'p', 30_000, "the parent's run");
        expect(run.children).toEqual({
          [child]: {
            'c-0': { value: 'c-0!', pid: expect.any(Number) as unknown, attempt: expect.any(Number) as unknown },
            'c-1': { value: marker, pid: doomed.pid, attempt: 1 },
          },
        });
        await eventually(async () => (await flowKeysLeft(fx.redis, parent)).length === 0, 30_000, 100);
        await eventually(async () => (await leftovers(fx.redis, parent)).messages === 0, 30_000, 100);
        // c-1 was acked once, by the killed process, and never ran again; the parent ran once.
        expect(processes.of('start').filter((e) => e.id === 'c-1')).toHaveLength(1);
        expect(processes.of('start').filter((e) => e.id === 'p')).toHaveLength(1);
        for (const topic of [parent, child]) {
          expect(await leftovers(fx.redis, topic)).toEqual(NOTHING_LEFT);
          expect(await flowKeysLeft(fx.redis, topic)).toEqual([]);
        }
      } finally {
        await processes.stopAll();
        await proxy.close();
      }
    }, 90_000);
  });

  describe('on a Redis Cluster', () => {
    let cluster: RedisCluster;
    let client: TestClient | undefined;
    const services: RedisAckQueueService[] = [];

    beforeAll(async () => {
      // No replicas: nothing fails over here, the slots are what matters.
      cluster = await RedisCluster.start({ replicasPerMaster: 0 });
    });

    afterAll(async () => {
      await Promise.all(services.map((service) => service.close(0)));
      await cluster?.stop();
    });

    /** A new topic whose slot is on `master`. */
    async function topicOn(master: RedisServer, name: string): Promise<string> {
      for (;;) {
        const topic = uniqueTopic(name);
        if ((await cluster.nodeForKey(`{ackq:${topic}}`)) === master) return topic;
      }
    }

    const where: Where = {
      get env() {
        return { REDIS_CLUSTER: cluster.seeds.map(({ host, port }) => `${host}:${port}`).join(',') };
      },
      get redis() {
        return (client ??= cluster.client());
      },
      async service() {
        const service = new RedisAckQueueService({ connection: { cluster: cluster.seeds }, commandTimeoutMs: 60_000 });
        services.push(service);
        await service.connect();
        return service;
      },
      async topics(names) {
        const masters = await cluster.masters();
        return Promise.all(names.map((name, i) => topicOn(masters[i % masters.length], name)));
      },
    };

    it('three masters, one topic each: every parent hears its children across slots, none stuck', async () => {
      await flowsUnderKills(where, 'flows-sigkill-cluster');
    }, 150_000);

    it("children whose last lease ran out in Redis: the sweeper passes each end from the child's slot to its parent's", async () => {
      await unpassedChildEnds(where);
    }, 90_000);
  });
});
