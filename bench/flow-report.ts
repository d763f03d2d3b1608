// The text of bench/results/flows.md from the figures `npm run bench:flows` measured.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { cpuModel, libVersion, loadAverage, spread } from './machine';
import { count, fixed, median, times } from './figures';

/** INFO commandstats over one phase, the benchmark's own commands left out. */
export interface CommandCounts {
  /** Calls of every command, those run inside scripts included. */
  all: number;
  /** EVAL/EVALSHA/FCALL calls. */
  scripts: number;
  byCommand: Map<string, number>;
  /** Microseconds by command (a script's own figure includes the commands it ran). */
  usecByCommand: Map<string, number>;
}

/** One system's trees stored with no consumer, then (if consumed) drained. */
export interface CostFigures {
  trees: number;
  /** used_memory growth over the pushes. */
  bytes: number;
  push: CommandCounts;
  /** Redis CPU seconds over the pushes. */
  pushCpu: number;
  consume?: CommandCounts;
  /** Redis CPU seconds over the drain. */
  consumeCpu?: number;
  /** This process's CPU seconds over the drain (consumers only: nothing is pushed then). */
  nodeCpu?: number;
  /** Trees per second while draining the stored ones. */
  drainRate?: number;
  wrong?: number;
  capped?: boolean;
}

/** One end-to-end round of one system and shape. */
export interface EndToEnd {
  /** Trees per second, from the first push to the last message handled. */
  rate: number;
  /** How long the pushes took. */
  pushSeconds: number;
  seconds: number;
  /** Parents that did not get every child's result. */
  wrong: number;
  capped: boolean;
}

/** The throughput workload's figures of one round, by figure id. */
export type PlainRound = Map<string, number>;

export interface FlowReport {
  started: Date;
  redisVersion: string;
  settings: { rounds: number; flows: number; stored: number; inFlight: number; concurrency: number; quick: boolean };
  /** By `<system> [10]` / `<system> [1]`. */
  cost: Map<string, CostFigures>;
  /** By `<system> <shape>`. */
  ends: Map<string, EndToEnd[]>;
  plain: Map<string, PlainRound[]>;
  plainKeys: string[];
}

const loadAtStart = loadAverage();

function bullmqVersion(): string {
  return (JSON.parse(readFileSync(require.resolve('bullmq/package.json'), 'utf8')) as { version: string }).version;
}

/** Per-child and per-parent bytes from trees of 10 children and of 1 (a linear model: tree = parent + n·child). */
function bytesOf(cost: Map<string, CostFigures>, system: string) {
  const ten = cost.get(`${system} [10]`);
  const one = cost.get(`${system} [1]`);
  if (!ten || !one) return { child: NaN, parent: NaN };
  const child = (ten.bytes / ten.trees - one.bytes / one.trees) / 9;
  return { child, parent: one.bytes / one.trees - child };
}

function costRows(report: FlowReport): string[][] {
  const { cost } = report;
  const per = (system: string, phase: 'push' | 'consume', field: 'all' | 'scripts', unit: 'child' | 'message') => {
    const figures = cost.get(`${system} [10]`);
    const counts = figures?.[phase];
    if (!figures || !counts) return NaN;
    // The unmeasured first tree is not in the push counts, but it is drained with the rest.
    const trees = phase === 'push' ? figures.trees : figures.trees + 1;
    return counts[field] / (trees * (unit === 'child' ? 10 : 11));
  };
  const row = (label: string, ours: number, bull: number, format: (n: number) => string) => [
    label,
    format(ours),
    format(bull),
    times(ours / bull),
  ];
  /** CPU µs of one phase per child (or message). */
  const cpu = (system: string, field: 'pushCpu' | 'consumeCpu' | 'nodeCpu', unit: 'child' | 'message') => {
    const figures = cost.get(`${system} [10]`);
    const seconds = figures?.[field];
    if (!figures || seconds === undefined) return NaN;
    const trees = field === 'pushCpu' ? figures.trees : figures.trees + 1;
    return (seconds * 1e6) / (trees * (unit === 'child' ? 10 : 11));
  };
  const cpuRows = (kind: 'flows' | 'plain', unit: 'child' | 'message') =>
    (
      [
        ['pushCpu', 'Redis CPU µs', 'pushing'],
        ['consumeCpu', 'Redis CPU µs', 'consuming'],
        ['nodeCpu', 'consumer process CPU µs', 'consuming'],
      ] as const
    ).map(([field, what, phase]) =>
      row(
        `${kind}: ${what} per ${unit}, ${phase}`,
        cpu(`ours ${kind}`, field, unit),
        cpu(`BullMQ ${kind}`, field, unit),
        fixed(1),
      ),
    );
  /** Redis commands and script calls per child (or message), pushing then consuming. */
  const commandRows = (kind: 'flows' | 'plain', unit: 'child' | 'message') =>
    (
      [
        ['push', 'all', 'Redis commands', 'pushing'],
        ['push', 'scripts', 'script calls', 'pushing'],
        ['consume', 'all', 'Redis commands', 'consuming'],
        ['consume', 'scripts', 'script calls', 'consuming'],
      ] as const
    ).map(([phase, field, what, doing]) =>
      row(
        `${kind}: ${what} per ${unit}, ${doing}`,
        per(`ours ${kind}`, phase, field, unit),
        per(`BullMQ ${kind}`, phase, field, unit),
        fixed(2),
      ),
    );
  const oursBytes = bytesOf(cost, 'ours flows');
  const bullBytes = bytesOf(cost, 'BullMQ flows');
  const plainBytes = (system: string) => {
    const figures = cost.get(`${system} [10]`);
    return figures ? figures.bytes / (figures.trees * 11) : NaN;
  };
  return [
    ...commandRows('flows', 'child'),
    ...cpuRows('flows', 'child'),
    row('flows: Redis bytes per waiting child', oursBytes.child, bullBytes.child, count),
    row('flows: Redis bytes per waiting parent', oursBytes.parent, bullBytes.parent, count),
    ...commandRows('plain', 'message'),
    ...cpuRows('plain', 'message'),
    row('plain: Redis bytes per queued message', plainBytes('ours plain'), plainBytes('BullMQ plain'), count),
    row(
      'stored trees of 1 + 10 drained: trees/s (flows)',
      cost.get('ours flows [10]')?.drainRate ?? NaN,
      cost.get('BullMQ flows [10]')?.drainRate ?? NaN,
      count,
    ),
    row(
      'the same messages stored plain, drained: sets of 11/s',
      cost.get('ours plain [10]')?.drainRate ?? NaN,
      cost.get('BullMQ plain [10]')?.drainRate ?? NaN,
      count,
    ),
  ];
}

function endRows(report: FlowReport): string[][] {
  const rate = (name: string) => median((report.ends.get(name) ?? []).map((r) => r.rate));
  const rows: string[][] = [];
  for (const [shape, label, nodes] of [
    ['fan-in', 'fan-in (1 parent + 10 children)', 11],
    ['3-level', '3 levels (1 + 3 + 9)', 13],
  ] as const) {
    const [oursFlow, bullFlow] = [rate(`ours flows ${shape}`), rate(`BullMQ flows ${shape}`)];
    const [oursPlain, bullPlain] = [rate(`ours plain ${shape}`), rate(`BullMQ plain ${shape}`)];
    rows.push(
      [`${label}: flows/s end to end`, count(oursFlow), count(bullFlow), times(oursFlow / bullFlow)],
      [
        `the same ${nodes} messages plain: sets/s end to end`,
        count(oursPlain),
        count(bullPlain),
        times(oursPlain / bullPlain),
      ],
      [`${shape}: flow rate ÷ plain rate`, times(oursFlow / oursPlain), times(bullFlow / bullPlain), ''],
    );
  }
  return rows;
}

function plainRows(report: FlowReport): string[][] {
  const { plain, plainKeys } = report;
  const bull = 'BullMQ';
  const ours = plainKeys.filter((key) => key !== bull);
  const med = (key: string, id: string) => median(plain.get(key)!.map((round) => round.get(id)!));
  /** Per round: this system's figure ÷ BullMQ's in the same round; the median of those. */
  const ratio = (key: string, id: string) =>
    median(plain.get(key)!.map((round, i) => round.get(id)! / plain.get(bull)![i].get(id)!));
  const ratioSpread = (key: string, id: string) =>
    spread(
      plain.get(key)!.map((round, i) => round.get(id)! / plain.get(bull)![i].get(id)!),
      times,
    );
  const rows: string[][] = [];
  const line = (label: string, cells: (key: string) => string, bullCell: string) =>
    rows.push([label, ...ours.map(cells), bullCell]);
  line('push/s, batches of 1,000 (median)', (key) => count(med(key, 'push')), count(med(bull, 'push')));
  line(
    'push/s ÷ BullMQ in the same round (median; spread)',
    (key) => `${times(ratio(key, 'push'))} (${ratioSpread(key, 'push')})`,
    '1×',
  );
  line('consume+ack/s, concurrency 50 (median)', (key) => count(med(key, 'consume')), count(med(bull, 'consume')));
  line(
    'consume+ack/s ÷ BullMQ in the same round (median; spread)',
    (key) => `${times(ratio(key, 'consume'))} (${ratioSpread(key, 'consume')})`,
    '1×',
  );
  line('Redis CPU µs per pushed message', (key) => fixed(2)(med(key, 'push-cpu')), fixed(2)(med(bull, 'push-cpu')));
  line(
    'Redis µs in top-level commands per pushed message (commandstats)',
    (key) => fixed(2)(med(key, 'push-usec')),
    fixed(2)(med(bull, 'push-usec')),
  );
  line('Redis CPU µs per consumed message', (key) => fixed(2)(med(key, 'redis-cpu')), fixed(2)(med(bull, 'redis-cpu')));
  line('Redis commands per consumed message', (key) => fixed(2)(med(key, 'cmds')), fixed(2)(med(bull, 'cmds')));
  line('script calls per consumed message', (key) => fixed(3)(med(key, 'scripts')), fixed(3)(med(bull, 'scripts')));
  return rows;
}

/** The commands of one phase of one system, per child (or message), most called first. */
function commandTable(figures: CostFigures | undefined, phase: 'push' | 'consume', per: number): string {
  const counts = figures?.[phase];
  if (!figures || !counts) return '(not measured)';
  const trees = phase === 'push' ? figures.trees : figures.trees + 1;
  const rows = [...counts.byCommand]
    .sort((a, b) => b[1] - a[1])
    .filter(([, calls]) => calls / (trees * per) >= 0.005)
    .map(
      ([command, calls]) =>
        `| ${command} | ${(calls / (trees * per)).toFixed(2)} | ` +
        `${((counts.usecByCommand.get(command) ?? 0) / (trees * per)).toFixed(2)} |`,
    );
  return ['| command | calls | µs |', '| --- | ---: | ---: |', ...rows].join('\n');
}

const table = (header: string[], rows: string[][]) =>
  [`| ${header.join(' | ')} |`, `| ${header.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`]
    .concat(rows.map((row) => `| ${row.join(' | ')} |`))
    .join('\n');

export function reportText(report: FlowReport): string {
  const { settings: s, ends, plain, plainKeys, cost } = report;
  const bull = `BullMQ ${bullmqVersion()}`;
  const everyRound = [...ends.entries()].map(
    ([name, rounds]) =>
      `| ${name} | ${rounds.map((r) => `${count(r.rate)}${r.wrong ? ` (${r.wrong} wrong)` : ''}${r.capped ? ' (capped)' : ''}`).join(' | ')} | ` +
      `${spread(
        rounds.map((r) => r.pushSeconds),
        fixed(2),
      )} |`,
  );
  const plainRounds = plainKeys.map(
    (key) =>
      `| ${key} | ${plain
        .get(key)!
        .map((round) => `${count(round.get('push')!)} / ${count(round.get('consume')!)}`)
        .join(' | ')} |`,
  );
  const roundHeads = Array.from({ length: s.rounds }, (_, i) => `round ${i + 1}`);
  const wrong = [...ends.values()].flat().reduce((sum, r) => sum + r.wrong, 0);
  const capped = [...ends.values()].flat().filter((r) => r.capped).length;
  return [
    "# Flows: this project's pushFlow against BullMQ's FlowProducer, and against plain messages",
    '',
    ...(s.quick ? ['**Quick smoke run: small counts, figures are not meaningful.**', ''] : []),
    `- Date: ${report.started.toISOString()}; ${libVersion()}; ${cpuModel()}, ${cpus().length} cores ` +
      `(load average ${loadAtStart} before, ${loadAverage()} at the end); Node ${process.version}; ${report.redisVersion} ` +
      `(private server, \`--save '' --appendonly no\`)`,
    `- Command: \`npm run bench:flows${plainKeys.length > 2 ? ' -- --before=<checkout of the build before flows>' : ''}\`;`,
    '  one Node process, one redis-server, FLUSHALL between runs. This project: `RedisAckQueueService` (a producer',
    `  service and a consumer service), \`consume(topic, handler, { concurrency: ${s.concurrency} })\` per topic; ${bull}:`,
    `  \`FlowProducer\` / \`Queue\` with \`removeOnComplete\` and \`removeOnFail\`, a \`Worker\` per queue at concurrency ${s.concurrency}.`,
    '  Level i of a tree is on topic (queue) i. Payloads ~100 bytes of JSON; each handler returns `{ seq }`; a',
    "  parent reads its children's results (`context.childResults()` / `await job.getChildrenValues()`) and checks",
    '  it got one per child. Plain: the same messages, one `pushMany` / `addBulk` (or `push` / `add`) per level and',
    '  tree, no flow.',
    `- End to end: consumers started, then ${count(s.flows)} trees pushed, ${s.inFlight} \`pushFlow\` / \`FlowProducer.add\``,
    '  (or plain sets) in flight; from the first push until the last message was handled (for a flow: its last',
    `  root ran). One untimed warm-up of each, then ${s.rounds} rounds, the systems interleaved (round r starts with the`,
    '  r-th); medians over the rounds.',
    `- Costs: ${count(s.stored)} trees of 1 + 10 pushed with no consumer (${s.inFlight} in flight): INFO commandstats over`,
    '  the pushes (commands run inside scripts included; script calls are EVAL/EVALSHA), `used_memory` growth; then',
    `  the consumers drain them (commandstats over the drain). Per child: divided by the ${count(s.stored * 10)} children`,
    "  (the parents' own commands included: the cost of a flow per child it has). Bytes per waiting child and",
    `  parent: the same with trees of 1 + 1, tree = parent + n × child (a child includes its entry in its parent's`,
    '  records). Plain: the same messages per message (÷ 11 per set). CPU: Redis `INFO cpu` over each phase, and',
    "  this process's `process.cpuUsage()` over the drain (only consumers run then). One run of each system (no",
    "  rounds: commands and bytes do not depend on the machine's load, rates and CPU do); Redis' latency tracking is",
    '  off meanwhile (its per-command histograms would skew `used_memory`).',
    `- Plain topics: the throughput workload of \`npm run bench\` (${s.quick ? '2,000' : '50,000'} messages pushed in batches of 1,000, then`,
    `  drained at concurrency 50, through the Nest module) on ${plainKeys.join(', ')}, one warm-up of each, then`,
    `  ${s.rounds} interleaved rounds. The ratio to BullMQ is taken per round, then the median: this 2-core machine is`,
    '  shared with other work, so a ratio within one run says more than an absolute figure.',
    '',
    '## Cost per child',
    '',
    table(['figure', 'this project', bull, `this project ÷ ${bull}`], costRows(report)),
    '',
    '## End to end',
    '',
    ends.size === 0 ? '(not run)' : table(['figure', 'this project', bull, `this project ÷ ${bull}`], endRows(report)),
    '',
    wrong > 0 || capped > 0
      ? `- **${wrong} parents missed a child's result; ${capped} rounds were cut at the time cap.**`
      : "- Every parent got every child's result; no round was cut.",
    '',
    '## Plain topics: what they pay for flows',
    '',
    plain.get('BullMQ')!.length === 0 ? '(not run)' : table(['figure', ...plainKeys], plainRows(report)),
    '',
    '## Every round',
    '',
    'End to end, trees (or plain sets) per second; the last column: how long the pushes took, lowest to highest.',
    '',
    table(['run', ...roundHeads, 'push s'], []) + '\n' + everyRound.join('\n'),
    '',
    'Plain topics, push/s / consume+ack/s:',
    '',
    table(['system', ...roundHeads], []) + '\n' + plainRounds.join('\n'),
    '',
    '## Commands per child (this project)',
    '',
    "Calls and µs per child (INFO commandstats: commands run inside scripts count too, and a script's µs include",
    "theirs; µs are Redis's wall clock, so on a loaded machine they include time its process waited for a core).",
    '',
    `Pushing ${count(s.stored)} trees of 1 + 10, per child:`,
    '',
    commandTable(cost.get('ours flows [10]'), 'push', 10),
    '',
    'Consuming them, per child:',
    '',
    commandTable(cost.get('ours flows [10]'), 'consume', 10),
    '',
    'The same messages plain, consuming, per message:',
    '',
    commandTable(cost.get('ours plain [10]'), 'consume', 11),
    '',
  ].join('\n');
}
