import type { ChildProcess } from 'node:child_process';
import { ConsumerProcesses, type ConsumerEvent } from '../support/consumer-processes';
import { FaultLedger, faultSeed, finishScenario, hold, produce, seededRandom } from '../support/fault-ledger';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

const GROUPS = 30;
const GLOBAL_CONCURRENCY = 6;

/** One handler run, from its start line to its done line (or to the kill of its process). */
interface Run {
  id: string;
  group: string;
  seq: number;
  start: number;
  end: number;
  finished: boolean;
}

/** The handler runs the processes reported; a killed process' open runs end at its kill. */
function runsOf(events: ConsumerEvent[], killedAt: Map<number, number>): Run[] {
  const open = new Map<string, Run>();
  const runs: Run[] = [];
  for (const event of events) {
    const key = `${event.pid}/${event.id}/${event.attempt}`;
    if (event.type === 'start') {
      // Message i of the producer is number floor(i / GROUPS) of group i % GROUPS.
      const i = Number(event.id!.split('-')[1]);
      const run = { id: event.id!, group: `g${i % GROUPS}`, seq: Math.floor(i / GROUPS), start: event.now! };
      open.set(key, { ...run, end: 0, finished: false });
      expect(event.group).toBe(run.group);
    } else if (event.type === 'done' && open.has(key)) {
      runs.push({ ...open.get(key)!, end: event.now!, finished: true });
      open.delete(key);
    }
  }
  for (const [key, run] of open) runs.push({ ...run, end: killedAt.get(Number(key.split('/')[0])) ?? Infinity });
  return runs;
}

/**
 * Order broken: a run of message k+1 of a group that started before the run of k that finished
 * (the one that was acked). Each case is explained by the ledger or reported.
 */
function orderBreaks(runs: Run[]): string[] {
  const finished = new Map<string, Run>();
  for (const run of runs) if (run.finished) finished.set(run.id, run);
  const breaks: string[] = [];
  for (const run of runs) {
    const previous = [...finished.values()].find((r) => r.group === run.group && r.seq === run.seq - 1);
    if (previous && run.start < previous.end) {
      breaks.push(`${run.id} started at ${run.start}, before ${previous.id} finished at ${previous.end}`);
    }
  }
  return breaks;
}

/** The most runs open at one moment, across every process. */
function mostAtOnce(runs: Run[]): number {
  const edges = runs.flatMap((r) => [
    { at: r.start, step: 1 },
    { at: r.end, step: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let open = 0;
  let most = 0;
  for (const { step } of edges) most = Math.max(most, (open += step));
  return most;
}

describe('fault: ordered groups and a fleet-wide limit under SIGKILL', () => {
  const fx = useRedis();

  it('keeps every group in order and never runs more than globalConcurrency at once', async () => {
    const seed = faultSeed();
    const random = seededRandom(seed);
    const topic = uniqueTopic('groups-kill');
    const ledger = new FaultLedger();
    const processes = ConsumerProcesses.forTopic(fx.server.url, topic, { leaseMs: 800, handlerMs: 15 });
    const env = { GLOBAL_CONCURRENCY: String(GLOBAL_CONCURRENCY) };
    const killedAt = new Map<number, number>();
    try {
      const queue = await fx.service();
      await Promise.all([processes.start(env), processes.start(env), processes.start(env)]);
      const total = 1_200;
      const producing = produce(queue, topic, ledger, {
        total,
        batch: 60,
        everyMs: 60,
        idPrefix: 'm',
        item: (i) => ({ group: `g${i % GROUPS}` }),
      });
      for (let k = 0; k < 5; k++) {
        await hold(300 + Math.floor(random() * 600));
        const alive = processes.alive();
        const victim: ChildProcess = alive[Math.floor(random() * alive.length)];
        await processes.kill(victim, 'SIGKILL');
        killedAt.set(victim.pid!, Date.now());
        ledger.kill(`pid:${victim.pid}`);
        await processes.start(env);
      }
      await producing;
      await queue.waitUntilIdle(topic, { timeoutMs: 60_000 });
      // Idle in Redis; the last acks' reports may still be on their way through the pipes.
      await processes.waitForEndReports(ledger.pushed);

      ledger.fromProcesses(processes.events);
      const runs = runsOf(processes.events, killedAt);
      const tally = await finishScenario(fx.redis, topic, ledger, 'groups-sigkill', {
        shown: { seed },
        details: { runs: runs.length, mostAtOnce: mostAtOnce(runs) },
      });
      expect(tally.handled).toBe(total);
      // A killed handler's lease keeps its group's slot until it expires: the next message of
      // the group waits for the redelivery, so no order is broken even across kills.
      expect(orderBreaks(runs)).toEqual([]);
      expect(mostAtOnce(runs)).toBeLessThanOrEqual(GLOBAL_CONCURRENCY);
      const tag = `{ackq:${topic}}`;
      const groupKeys = ['group-queue', 'group-waiting', 'group-active', 'group-slots', 'group-turns'];
      expect(await Promise.all(groupKeys.map((key) => fx.redis.exists(`${tag}:${key}`)))).toEqual([0, 0, 0, 0, 0]);
    } finally {
      await processes.stopAll();
    }
  }, 120_000);
});
