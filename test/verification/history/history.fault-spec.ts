import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectLogs } from '../../support/capture-logs';
import { FAULT_KINDS, planRun } from './history-plan';
import { runHistory, type RunResult } from './history-run';

/**
 * Seeded fault runs recorded as histories and checked against the total-queue model (see
 * history-checker.ts): nothing confirmed is lost, nothing unexpected is delivered, every
 * duplicate is paired with the fault that explains it.
 *
 * CI mode (default): four short runs, one each of a consumer SIGKILL, a consumer SIGSTOP past its
 * lease, a Redis SIGKILL with `appendfsync always`, and a proxy cutting every connection.
 * Long mode: HISTORY_RUNS=<n> [HISTORY_SEED=<first>] [HISTORY_DIR=<dir>] runs seeds first..first+n-1
 * at full length (the seed picks the fault kind: seed modulo the 7 kinds) and writes summary.json;
 * HISTORY_SEEDS=<a,b,...> replays those seeds at full length instead (a violation's seed, say).
 */
const longRuns = Number(process.env.HISTORY_RUNS ?? 0);
const firstSeed = Number(process.env.HISTORY_SEED ?? 1);
const outDir = process.env.HISTORY_DIR ?? join(tmpdir(), 'ackq-history');
/** CI seeds: 7000 + a kind's position picks that kind. */
const CI_SEEDS = ['kill-consumer', 'stop-consumer', 'kill-redis-always', 'cut-connections'].map(
  (kind) => 7000 + FAULT_KINDS.indexOf(kind as (typeof FAULT_KINDS)[number]),
);
const listed = process.env.HISTORY_SEEDS?.split(',').map(Number);
const seeds = listed ?? (longRuns > 0 ? Array.from({ length: longRuns }, (_, i) => firstSeed + i) : CI_SEEDS);
const long = listed !== undefined || longRuns > 0;
const scale = long ? 1 : 0.4;

describe('verification: recorded fault histories, checked', () => {
  // What the faults cause in the producer's own service: its connection lost, then back.
  expectLogs(/^Lost the connection to Redis/);
  const results: RunResult[] = [];

  beforeAll(() => mkdirSync(outDir, { recursive: true }));
  afterAll(() => {
    if (long) writeFileSync(join(outDir, 'summary.json'), JSON.stringify(summarize(results), null, 2));
  });

  it.each(seeds)(
    'seed %i',
    async (seed) => {
      const plan = planRun(seed, scale);
      const result = await runHistory(plan, outDir);
      results.push(result);
      const { counts, explainedBy } = result.verdict;
      process.stdout.write(
        `history seed=${seed} kind=${plan.kind} ${JSON.stringify({ ...counts, explainedBy, faults: result.faults, ms: result.durationMs })} → ${result.files.jsonl}\n`,
      );
      expect({
        seed,
        kind: plan.kind,
        lost: result.verdict.lost,
        unexpected: result.verdict.unexpected,
        unexplained: result.verdict.unexplained,
      }).toEqual({
        seed,
        kind: plan.kind,
        lost: [],
        unexpected: [],
        unexplained: [],
      });
      // The run did what it was for: messages flowed, and its faults happened.
      expect(counts.deliveries).toBeGreaterThan(0);
      expect(Object.keys(result.faults).length).toBeGreaterThan(0);
    },
    180_000,
  );
});

/** Per fault kind: runs and the sums of the verdicts' counts and explanations. */
function summarize(results: RunResult[]) {
  const byKind: Record<string, Record<string, unknown>> = {};
  for (const { plan, verdict, faults } of results) {
    const row = (byKind[plan.kind] ??= { runs: 0, seeds: [], counts: {}, explainedBy: {}, faults: {}, violations: [] });
    row.runs = (row.runs as number) + 1;
    (row.seeds as number[]).push(plan.seed);
    add(row.counts as Record<string, number>, verdict.counts);
    add(row.explainedBy as Record<string, number>, verdict.explainedBy);
    add(row.faults as Record<string, number>, faults);
    if (!verdict.valid) (row.violations as number[]).push(plan.seed);
  }
  return byKind;
}

function add(into: Record<string, number>, from: Partial<Record<string, number>>): void {
  for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + (value ?? 0);
}
