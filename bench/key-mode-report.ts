// The text of bench/results/key-modes.md from the runs `npm run bench:keys` measured.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { type CallStyle, HOLD_MS, type KeyWorkload, type Outcome, WORKLOADS } from './key-mode-systems';
import { cpuModel, libVersion, loadAverage, spread } from './machine';
import { count, fixed, median, times } from './figures';

export type System = 'ours' | 'bullmq';

/** One run of a round: a system's workload in one call style. */
export interface RunKey {
  system: System;
  workload: string;
  style: CallStyle;
}

export const runKey = ({ system, workload, style }: RunKey): string => `${system}|${style}|${workload}`;

/** What one run measured, per push. */
export interface Run {
  rate: number;
  /** Redis CPU (INFO cpu, user + sys) per push. */
  redisCpuUs: number;
  /** Redis commands per push (INFO commandstats: commands run inside scripts included). */
  commands: number;
  /** EVAL/EVALSHA calls per push. */
  scripts: number;
  /** This process's CPU per push (the producer's side). */
  nodeCpuUs: number;
  /** Calls per push by command. */
  byCommand: Map<string, number>;
  /** Microseconds per push by command (commandstats; a script's figure includes the commands it ran). */
  usecByCommand: Map<string, number>;
  /** Messages (jobs) stored on the topic after the run, the warm-up push's included. */
  stored: number;
  /** What this project answered per push (empty for BullMQ). */
  outcomes: Map<Outcome, number>;
}

export interface KeyModeReport {
  started: Date;
  redisVersion: string;
  settings: { rounds: number; pushes: number; inFlight: number; batch: number; quick: boolean };
  /** By runKey, one per round in round order. */
  runs: Map<string, Run[]>;
}

type Field = 'rate' | 'redisCpuUs' | 'commands' | 'nodeCpuUs';

const loadAtStart = loadAverage();
const STYLE_LABELS: Record<CallStyle, (s: KeyModeReport['settings']) => string> = {
  single: (s) => `single \`push\` / \`add\` calls, ${s.inFlight} in flight`,
  batch: (s) => `\`pushMany\` / \`addBulk\` batches of ${s.batch}, one after another`,
};
const SYSTEM_LABELS: Record<System, string> = { ours: 'this project', bullmq: 'BullMQ' };

function bullmqVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('bullmq/package.json'), 'utf8')) as { version: string }).version;
}

/** A markdown table: the first column left-aligned, the others right-aligned (figures) unless `text`. */
const table = (header: string[], rows: string[][], text = false) =>
  [`| ${header.join(' | ')} |`, `| ${header.map((_, i) => (i === 0 || text ? '---' : '---:')).join(' | ')} |`]
    .concat(rows.map((row) => `| ${row.join(' | ')} |`))
    .join('\n');

/** Figures of one run key over the rounds. */
const runsOf = (report: KeyModeReport, key: RunKey) => report.runs.get(runKey(key)) ?? [];
const medianOf = (report: KeyModeReport, key: RunKey, field: Field) =>
  median(runsOf(report, key).map((run) => run[field]));

/** Per round: a run's figure ÷ another's of the same round. */
function ratios(report: KeyModeReport, key: RunKey, base: RunKey, field: Field): number[] {
  const baseRuns = runsOf(report, base);
  return runsOf(report, key).map((run, round) => run[field] / baseRuns[round][field]);
}

/** "0.85× (0.80× to 0.91×)": the median of the ratios per round, and their spread. */
function ratioCell(values: number[]): string {
  if (values.length === 0) return '–';
  return values.length === 1 ? times(values[0]) : `${times(median(values))} (${spread(values, times)})`;
}

/** One system's workloads in one call style against its plain push of the same rounds. */
function againstPlainRows(report: KeyModeReport, system: System, style: CallStyle): string[][] {
  const plain: RunKey = { system, workload: 'plain', style };
  return WORKLOADS.filter((workload) => runsOf(report, { system, workload: workload.name, style }).length > 0).map(
    ({ name }) => {
      const key: RunKey = { system, workload: name, style };
      const isPlain = name === 'plain';
      const cells = (field: Field, format: (n: number) => string) => [
        format(medianOf(report, key, field)),
        isPlain ? '1×' : ratioCell(ratios(report, key, plain, field)),
      ];
      return [
        name,
        ...cells('rate', count),
        ...cells('redisCpuUs', fixed(1)),
        // Commands per push do not depend on the machine: the median ratio says it all.
        fixed(2)(medianOf(report, key, 'commands')),
        isPlain ? '1×' : times(median(ratios(report, key, plain, 'commands'))),
      ];
    },
  );
}

/** This project beside BullMQ in one call style, for the workloads BullMQ has. */
function sideBySideRows(report: KeyModeReport, style: CallStyle): string[][] {
  return WORKLOADS.filter((workload) => 'opts' in workload.bullmq).map(({ name }) => {
    const ours: RunKey = { system: 'ours', workload: name, style };
    const bull: RunKey = { system: 'bullmq', workload: name, style };
    const pair = (field: Field, format: (n: number) => string) => [
      format(medianOf(report, ours, field)),
      format(medianOf(report, bull, field)),
    ];
    return [
      name,
      ...pair('rate', count),
      ratioCell(ratios(report, ours, bull, 'rate')),
      ...pair('redisCpuUs', fixed(1)),
      ...pair('commands', fixed(2)),
      ...pair('nodeCpuUs', fixed(1)),
    ];
  });
}

/** What BullMQ uses for each mode, or why it has nothing. */
function equivalentRows(): string[][] {
  return WORKLOADS.map((workload: KeyWorkload) => [
    workload.name,
    'opts' in workload.bullmq ? workload.bullmq.option : workload.bullmq.none,
  ]);
}

/** Every round's pushes/s and Redis CPU µs per push, by run. */
function roundRows(report: KeyModeReport): string[][] {
  const rows: string[][] = [];
  for (const style of ['single', 'batch'] as const) {
    for (const system of ['ours', 'bullmq'] as const) {
      for (const { name } of WORKLOADS) {
        const runs = runsOf(report, { system, workload: name, style });
        if (runs.length === 0) continue;
        rows.push([
          `${SYSTEM_LABELS[system]}, ${style}, ${name}`,
          ...runs.map((run) => `${count(run.rate)} / ${fixed(1)(run.redisCpuUs)}`),
        ]);
      }
    }
  }
  return rows;
}

/** Calls and µs per push by command, this project's workloads side by side (the last round of one call style). */
function commandMatrix(report: KeyModeReport, style: CallStyle): string {
  const last = WORKLOADS.map(({ name }) => runsOf(report, { system: 'ours', workload: name, style }).at(-1));
  const commands = new Map<string, number>();
  for (const run of last) {
    for (const [command, n] of run?.byCommand ?? []) commands.set(command, Math.max(commands.get(command) ?? 0, n));
  }
  const rows = [...commands]
    .filter(([, most]) => most >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([command]) => [
      command,
      ...last.map((run) =>
        run?.byCommand.has(command)
          ? `${fixed(2)(run.byCommand.get(command)!)} / ${fixed(2)(run.usecByCommand.get(command)!)}`
          : '',
      ),
    ]);
  return table(
    ['command', ...WORKLOADS.map(({ name }) => name)],
    [...rows, ['all', ...last.map((run) => fixed(2)(run?.commands ?? NaN))]],
  );
}

/**
 * What each run left and answered against what its workload should: a hot key's pushes leave its
 * one message (the warm-up push's), every other workload one message per push.
 */
function checks(report: KeyModeReport): { rows: string[][]; wrong: number } {
  const { pushes } = report.settings;
  let wrong = 0;
  const rows: string[][] = [];
  for (const workload of WORKLOADS) {
    const hot = workload.expected !== 'stored';
    const storedWanted = (workload.backlog ?? 0) + (hot ? 1 : pushes + 1);
    for (const system of ['ours', 'bullmq'] as const) {
      const all = (['single', 'batch'] as const).flatMap((style) =>
        runsOf(report, { system, workload: workload.name, style }),
      );
      if (all.length === 0) continue;
      const badStored = all.filter((run) => run.stored !== storedWanted).length;
      const badOutcomes =
        system === 'ours' ? all.filter((run) => run.outcomes.get(workload.expected) !== pushes).length : 0;
      wrong += badStored + badOutcomes;
      rows.push([
        `${SYSTEM_LABELS[system]}, ${workload.name}`,
        system === 'ours' ? `every push: ${workload.expected}` : '(not read)',
        count(storedWanted),
        badStored + badOutcomes === 0 ? `all ${all.length} runs` : `**${badStored + badOutcomes} runs off**`,
      ]);
    }
  }
  return { rows, wrong };
}

export function reportText(report: KeyModeReport): { text: string; wrong: number } {
  const { settings: s } = report;
  const bull = `BullMQ ${bullmqVersion()}`;
  const roundHeads = Array.from({ length: s.rounds }, (_, i) => `round ${i + 1}`);
  const plainHeader = (system: System) => [
    system === 'ours' ? 'workload' : `${bull} workload`,
    'pushes/s',
    '÷ plain',
    'Redis CPU µs per push',
    '÷ plain',
    'Redis commands per push',
    '÷ plain',
  ];
  const sideHeader = [
    'workload',
    'pushes/s, this project',
    bull,
    `this project ÷ ${bull}`,
    'Redis CPU µs per push, this project',
    bull,
    'Redis commands per push, this project',
    bull,
    'producer CPU µs per push, this project',
    bull,
  ];
  const checked = checks(report);
  const perStyle = (title: string, body: (style: CallStyle) => string) =>
    (['single', 'batch'] as const).flatMap((style) => [`${title}, ${STYLE_LABELS[style](s)}:`, '', body(style), '']);
  const text = [
    '# Key modes: the cost of a push with debounce, throttle or supersede against a plain push',
    '',
    ...(s.quick ? ['**Quick smoke run: small counts, figures are not meaningful.**', ''] : []),
    `- Date: ${report.started.toISOString()}; ${libVersion()}; ${cpuModel()}, ${cpus().length} cores ` +
      `(load average ${loadAtStart} before, ${loadAverage()} at the end); Node ${process.version}; ${report.redisVersion} ` +
      `(private server, \`--save '' --appendonly no\`); ${bull}; the run took ` +
      `${((Date.now() - report.started.getTime()) / 60_000).toFixed(1)} minutes`,
    '- Command: `npm run bench:keys`; one Node process, one redis-server, FLUSHALL after each run. This project: one',
    '  `RedisAckQueueService`, unpartitioned topics; BullMQ: a `Queue` per run. No consumer runs: each message',
    '  stays where its push left it. Payloads ~100 bytes of JSON.',
    `- Each run: a topic of its own, one untimed push (on a hot key: the key's first, so that every measured push`,
    `  takes the workload's path), then ${count(s.pushes)} pushes measured: ${STYLE_LABELS.single(s)}, or`,
    `  ${STYLE_LABELS.batch(s)}. Debounce delays and throttle windows are ${HOLD_MS / 60_000} minutes, so nothing`,
    '  falls due and no window ends within a run. Hot key: every push goes to one key (debounce and supersede',
    '  replace its waiting message, throttle answers a duplicate); distinct keys: a key per push (every push stores',
    '  a message and its key). One more: supersede on a hot key behind 10,000 plain messages pushed before (untimed),',
    '  waiting ahead of it in the ready list.',
    '- Per run: pushes/s (wall clock of the pushes); Redis CPU µs per push (`INFO cpu`, user + sys, over the',
    '  pushes); Redis commands per push (`INFO commandstats`: commands run inside scripts count too, the',
    "  EVALSHA itself included); this process's CPU µs per push (`process.cpuUsage()`, the producer's side).",
    `- One untimed small run of each first, then ${s.rounds} rounds of every run, each round starting further along`,
    '  the list than the one before. "÷ plain": a run\'s figure divided by the plain push\'s of the same system, call',
    '  style and round, then the median over the rounds (in brackets their lowest to highest): this 2-core machine',
    '  is shared with other work, so a ratio within one round says more than an absolute figure.',
    '',
    '## This project: each key mode against a plain push',
    '',
    ...perStyle('This project', (style) => table(plainHeader('ours'), againstPlainRows(report, 'ours', style))),
    `## ${bull}: its equivalents against its plain add`,
    '',
    table(['mode', `${bull} job options`], equivalentRows(), true),
    '',
    ...perStyle(bull, (style) => table(plainHeader('bullmq'), againstPlainRows(report, 'bullmq', style))),
    `## Side by side (medians; the rate ratio per round)`,
    '',
    ...perStyle('Side by side', (style) => table(sideHeader, sideBySideRows(report, style))),
    '## Checks',
    '',
    'What each run answered (this project) and left stored (both, the untimed push included), against what its',
    'workload should:',
    '',
    table(['runs', 'answers', 'messages stored after a run', 'as expected'], checked.rows),
    '',
    '## Every round',
    '',
    'pushes/s / Redis CPU µs per push:',
    '',
    table(['run', ...roundHeads], roundRows(report)),
    '',
    '## Commands per push (this project, last round)',
    '',
    "INFO commandstats calls / µs per push: commands run inside scripts count too, a script's own call is its",
    "EVALSHA and its µs include those of the commands it ran; µs are Redis's wall clock, so on a loaded machine",
    'they include time its process waited for a core.',
    '',
    ...perStyle('Commands per push', (style) => commandMatrix(report, style)),
  ].join('\n');
  return { text, wrong: checked.wrong };
}
