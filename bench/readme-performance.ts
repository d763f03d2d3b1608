// Writes the summary at the top of docs/performance.md from the last full runs' reports in bench/results/
// (latest.md from `npm run bench`, groups.md from `npm run bench:groups`, group-shares.md from
// `npm run bench:group-shares`, observability.md from `npm run bench:observability -- --targets`,
// transport.md from `npm run bench:transport`, flows.md from `npm run bench:flows -- --before=<checkout>`): each target of the project beside what was
// measured, with the date, commit and machine of the run. Run: npm run bench:readme (after them).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const RESULTS = join(ROOT, 'bench', 'results');
const BEGIN = '<!-- performance: written by `npm run bench:readme` from the reports; do not edit by hand -->';
/** The page the summary is written into (shipped in the package: the reports are links to the repository). */
const PAGE = join('docs', 'performance.md');
const REPOSITORY = 'https://github.com/nestjs-redis-ack-queue/nestjs-redis-ack-queue';
/** A report of bench/results/ as a link to it in the repository. */
const reportLink = (name: string) => `[\`bench/results/${name}\`](${REPOSITORY}/blob/main/bench/results/${name})`;
const END = '<!-- /performance -->';

const read = (file: string) => readFileSync(join(RESULTS, file), 'utf8');

/** The rows of the first markdown table in `text`, by their first cell, and its header cells. */
function table(text: string): { header: string[]; rows: Map<string, string[]> } {
  const lines = text.split('\n').filter((line) => line.startsWith('|'));
  const cells = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
  const [header, , ...body] = lines.map(cells);
  return { header, rows: new Map(body.map((row) => [row[0], row])) };
}

/** A figure of a row whose label starts with `label`, in the column whose header starts with `column`. */
function figure(text: string, label: string, column: string): number {
  const { header, rows } = table(text);
  const row = [...rows.entries()].find(([name]) => name.startsWith(label))?.[1];
  const index = header.findIndex((name) => name.startsWith(column));
  const value = row && index >= 0 ? Number(row[index].replace(/[,×]/g, '')) : NaN;
  if (Number.isNaN(value)) throw new Error(`no figure "${label}" / "${column}" in the report`);
  return value;
}

const line = (text: string, pattern: RegExp) => {
  const match = pattern.exec(text);
  if (!match) throw new Error(`no line ${pattern} in the report`);
  return match;
};

const count = (n: number) => Math.round(n).toLocaleString('en-US');
const times = (n: number) => `${n.toFixed(2)}×`;
const verdict = (met: boolean) => (met ? 'met' : '**short**');

function section(): string {
  const main = read('latest.md');
  const groups = read('groups.md');
  const shares = read('group-shares.md');
  const ours = 'this project';
  const push = figure(main, 'throughput: push/s', ours);
  const pushBull = push / figure(main, 'throughput: push/s', 'BullMQ');
  const pushRaw = push / figure(main, 'throughput: push/s', 'raw list');
  const consume = figure(main, 'throughput: consume+ack/s', ours);
  const consumeBull = consume / figure(main, 'throughput: consume+ack/s', 'BullMQ');
  const bytes = figure(main, 'memory: Redis bytes per queued msg', ours);
  const lateP99 = figure(main, 'delayed: lateness p99 ms', ours);
  const early = figure(main, 'delayed: ran early', ours);
  const p50 = figure(main, 'latency @500/s: p50 ms', ours);
  const p99 = figure(main, 'latency @500/s: p99 ms', ours);
  const rawP50 = figure(main, 'latency @500/s: p50 ms', 'raw list');
  const rawP99 = figure(main, 'latency @500/s: p99 ms', 'raw list');
  const grouped = figure(groups, 'this project, ordered groups', 'consume');
  const plain = figure(groups, 'this project, plain topic', 'consume');
  const groupmq = figure(groups, 'groupmq', 'consume');
  const violations = figure(groups, 'this project, ordered groups', 'order violations');
  const [, groupedBytes] = line(groups, /Redis bytes per queued message: ([\d,]+) grouped/);
  // One row per case of group-shares.md: | case | ± 5 % | worst % | verdict |
  const shareCases = [...shares.matchAll(/^\| ([^|]+) \| ± 5 % \| ([\d.]+|Infinity) % \|/gm)];
  if (shareCases.length === 0) throw new Error('no case in group-shares.md');
  const [, date] = line(main, /^- Date: (\d{4}-\d\d-\d\d)/m);
  const [, commit] = line(main, /lib\/ at commit (\w+( plus uncommitted changes)?)/);
  const [, machine] = line(main, /^- Machine: ([^(]+)\(/m);
  const [, node, redis] = line(main, /; Node (v[\d.]+); (\S+ [\d.]+)/);
  const rows = [
    [
      'push/s, batches of 1,000',
      '≥ 6× BullMQ, ≥ 0.9× a raw pipelined LPUSH',
      `${count(push)}/s: ${times(pushBull)} BullMQ, ${times(pushRaw)} raw`,
      verdict(pushBull >= 6 && pushRaw >= 0.9),
    ],
    [
      'consume+ack/s, concurrency 50',
      '≥ 4× BullMQ',
      `${count(consume)}/s: ${times(consumeBull)}`,
      verdict(consumeBull >= 4),
    ],
    [
      'Redis bytes per queued message',
      '≤ 200 plain, ≤ 300 grouped (1,000 groups × 20)',
      `${count(bytes)} plain, ${groupedBytes} grouped`,
      verdict(bytes <= 200 && Number(groupedBytes.replace(/,/g, '')) <= 300),
    ],
    [
      'delayed lateness',
      "p99 ≤ 3× the raw list's latency p99, never early",
      `p99 ${lateP99} ms (${times(lateP99 / rawP99)} raw p99), ${early} early`,
      verdict(lateP99 <= 3 * rawP99 && early === 0),
    ],
    [
      'latency at 500/s',
      "p50 ≤ 1.5×, p99 ≤ 2× the raw list's (BRPOP, no ack)",
      `p50 ${p50} ms (${times(p50 / rawP50)}), p99 ${p99} ms (${times(p99 / rawP99)}); raw ${rawP50} / ${rawP99} ms`,
      verdict(p50 <= 1.5 * rawP50 && p99 <= 2 * rawP99),
    ],
    [
      'ordered groups, 1,000 × 50, concurrency 50, order checked',
      '≥ 2.5× groupmq, ≥ 0.75× the plain topic, 0 violations',
      `${count(grouped)}/s: ${times(grouped / groupmq)} groupmq, ${times(grouped / plain)} plain, ${violations} violations`,
      verdict(grouped / groupmq >= 2.5 && grouped / plain >= 0.75 && violations === 0),
    ],
    [
      'weighted share, weights 1/2/5 backlogged',
      '± 5 % of 1:2:5 over any 10 s',
      shareCases.map(([, label, worst]) => `${label.trim()}: worst ${worst} %`).join('; '),
      verdict(shareCases.every(([, , worst]) => Number(worst) <= 5)),
    ],
  ];
  return [
    BEGIN,
    `Measured on ${date} at commit ${commit}, on ${machine.trim()} (Node ${node}, ${redis}), against BullMQ, bee-queue`,
    'and a raw Redis list (groupmq for ordered groups) in the same runs, on the same Redis, through the public API',
    '(medians of interleaved rounds where the report says so). Methods and every figure: the sections below and',
    `the reports in [\`bench/results/\`](${REPOSITORY}/tree/main/bench/results).`,
    '',
    '| figure | target | measured | |',
    '| --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    ...observability(),
    '',
    ...transport(),
    '',
    ...flows(),
    END,
  ].join('\n');
}

/** The targets of observability.md (`npm run bench:observability -- --targets`), as its own table. */
function observability(): string[] {
  const report = read('observability.md');
  const [, date] = line(report, /^- Date: (\d{4}-\d\d-\d\d)/m);
  const [, commit] = line(report, /lib\/ at commit (\w+( plus uncommitted changes)?)/);
  const [, machine] = line(report, /; ([^;]+ cores); Node/);
  const targets = report.slice(report.indexOf('| target |'));
  const { rows } = table(targets);
  return [
    `Metrics, tracing and history, each as a share of the consume rate without them (no-op handler unless`,
    `said; ${date}, commit ${commit}, ${machine}; ${reportLink('observability.md')}):`,
    '',
    '| figure | target | measured | |',
    '| --- | --- | --- | --- |',
    ...[...rows.values()].map(([label, target, rate, cpu, met]) => {
      const verdictText = met === 'met' ? 'met' : met === '**short**' ? '**short**' : '';
      return `| ${label} | ${target} | ${rate} of the rate, ${cpu} of the CPU per message | ${verdictText} |`;
    }),
  ];
}

/**
 * The transport table of transport.md (`npm run bench:transport`) as it is, with the run's
 * settings and the delivery guarantees beside the figures.
 */
function transport(): string[] {
  const report = read('transport.md');
  const [, date] = line(report, /^- Date: (\d{4}-\d\d-\d\d)/m);
  const [, commit] = line(report, /lib\/ at commit (\w+( plus uncommitted changes)?)/);
  const [, machine] = line(report, /; ([^;]+ cores) \(/);
  const [, rounds] = line(report, /(\d+) rounds of each system/);
  const [, events, inFlight] = line(report, /- events\/s: ([\d,]+) .* at most (\d+) in flight/);
  const [, callers, requests] = line(report, /- round trips\/s: (\d+) callers[^\n]*\n\s+([\d,]+) per round/);
  const [, concurrency] = line(report, /concurrency: (\d+) \}/);
  const [, spread] = line(report, /^- (Spread over the rounds [^\n]+)\.$/m);
  const guaranteesAt = report.indexOf('## Delivery guarantees');
  // The first table: the main workloads (the workload and the costs follow it).
  const { header, rows } = table(report.slice(0, report.indexOf('\n## ')));
  // The section's lines, up to the next heading.
  const guarantees = report
    .slice(guaranteesAt)
    .split('\n## ')[0]
    .replace('## Delivery guarantees', '')
    .trim()
    .split('\n');
  return [
    "`@nestjs/microservices`: this project's transport against Nest's built-in Redis transport, one run on one Redis,",
    `server and client in two processes, medians of ${rounds} interleaved rounds (${date}, commit ${commit}, ${machine};`,
    `${reportLink('transport.md')}). Events: ${events} \`emit\`s, ${inFlight} in flight, until the handler saw the last;`,
    `round trips: ${callers} callers of \`send\`, ${requests} per round. Our server at \`concurrency: ${concurrency}\`; Nest's handlers unbounded.`,
    '',
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...[...rows.values()].map((row) => `| ${row.join(' | ')} |`),
    '',
    `${spread}.`,
    '',
    ...guarantees,
  ];
}

/** The text of one `## heading` section of a report, up to the next one. */
function sectionOf(report: string, heading: string): string {
  const at = report.indexOf(`## ${heading}`);
  if (at < 0) throw new Error(`no section "${heading}" in the report`);
  return report.slice(at).split('\n## ')[0];
}

/**
 * Flows (flows.md, `npm run bench:flows`): flows/s against BullMQ's FlowProducer and against the
 * same messages pushed plain, what a child costs in Redis commands and bytes, and what plain
 * topics pay for flows (the build given as before and this one, each against BullMQ in the same rounds).
 */
function flows(): string[] {
  const report = read('flows.md');
  const [, date] = line(report, /^- Date: (\d{4}-\d\d-\d\d)/m);
  const [, commit] = line(report, /lib\/ at commit (\w+( plus uncommitted changes)?)/);
  const [, machine] = line(report, /; ([^;]+ cores) \(/);
  const [, rounds] = line(report, /then (\d+) rounds, the systems interleaved/);
  const [, trees, inFlight] = line(report, /- End to end: consumers started, then ([\d,]+) trees pushed, (\d+) /);
  const [, stored] = line(report, /- Costs: ([\d,]+) trees of 1 \+ 10/);
  const [, bull] = line(report, /\| figure \| this project \| (BullMQ [\d.]+) \|/);
  const costs = sectionOf(report, 'Cost per child');
  const ends = sectionOf(report, 'End to end');
  const plain = sectionOf(report, 'Plain topics');
  const cell = (text: string, label: string, column: string) => {
    const { header, rows } = table(text);
    const row = [...rows.entries()].find(([name]) => name.startsWith(label))?.[1];
    const index = header.findIndex((name) => name.startsWith(column));
    if (!row || index < 0) throw new Error(`no figure "${label}" / "${column}" in flows.md`);
    return row[index];
  };
  const both = (text: string, label: string) => [cell(text, label, 'this project'), cell(text, label, bull)];
  const pair = (text: string, first: string, second: string) => {
    const [a, b] = [both(text, first), both(text, second)];
    return [`${a[0]} / ${b[0]}`, `${a[1]} / ${b[1]}`];
  };
  const rate = (shape: string, label: string) => {
    const [ours, other] = both(ends, label);
    const [oursPlain, otherPlain] = both(ends, `${shape}: flow rate ÷ plain rate`);
    return [
      `${ours} (${cell(ends, label, 'this project ÷')} ${bull}; ${oursPlain} its plain rate)`,
      `${other} (${otherPlain} its plain rate)`,
    ];
  };
  const { header: plainHeader } = table(plain);
  const [before, after] = plainHeader.slice(1, 3);
  /** The median ratio and its spread over the rounds, as the report gives them. */
  const ratio = (label: string, column: string) => cell(plain, label, column).replace('(', '(rounds ');
  const rows = [
    ['fan-in (1 parent + 10 children): flows/s end to end', ...rate('fan-in', 'fan-in (1 parent')],
    ['3 levels (1 + 3 + 9): flows/s end to end', ...rate('3-level', '3 levels')],
    [
      `${stored} stored trees of 1 + 10 drained: trees/s (one run)`,
      ...both(costs, 'stored trees of 1 + 10 drained').map(
        (rate, i) => `${rate} (${both(costs, 'the same messages stored plain')[i]} sets of 11 plain)`,
      ),
    ],
    [
      'Redis commands per child, pushing / consuming',
      ...pair(costs, 'flows: Redis commands per child, pushing', 'flows: Redis commands per child, consuming'),
    ],
    [
      'script calls per child, pushing / consuming',
      ...pair(costs, 'flows: script calls per child, pushing', 'flows: script calls per child, consuming'),
    ],
    [
      'Redis commands per plain message, pushing / consuming',
      ...pair(costs, 'plain: Redis commands per message, pushing', 'plain: Redis commands per message, consuming'),
    ],
    [
      'Redis bytes per waiting child / per waiting parent',
      ...pair(costs, 'flows: Redis bytes per waiting child', 'flows: Redis bytes per waiting parent'),
    ],
    ['Redis bytes per plain queued message', ...both(costs, 'plain: Redis bytes per queued message')],
  ];
  const plainLine =
    before === 'this build'
      ? []
      : [
          '',
          `Plain topics on the build before (${before.replace(/^before \((\w+)\)$/, '$1')}) and on this one, each ÷ BullMQ in the same rounds`,
          `(medians of ${rounds}): push/s ${ratio('push/s ÷ BullMQ', before)} before, ${ratio('push/s ÷ BullMQ', after)} now;`,
          `consume+ack/s ${ratio('consume+ack/s ÷ BullMQ', before)} before, ${ratio('consume+ack/s ÷ BullMQ', after)} now.`,
          `Redis CPU per pushed message ${cell(plain, 'Redis CPU µs per pushed', before)} µs before, ` +
            `${cell(plain, 'Redis CPU µs per pushed', after)} now; per consumed message ` +
            `${cell(plain, 'Redis CPU µs per consumed', before)} µs before, ${cell(plain, 'Redis CPU µs per consumed', after)} now`,
          `(Redis commands per consumed message ${cell(plain, 'Redis commands per consumed', before)} before, ` +
            `${cell(plain, 'Redis commands per consumed', after)} now).`,
        ];
  return [
    `Flows (\`pushFlow\`) against ${bull}'s \`FlowProducer\` and against the same messages pushed plain, one run`,
    `on one Redis (${date}, commit ${commit}, ${machine}; ${reportLink('flows.md')}). End to end: consumers at`,
    `concurrency 50 on each level's topic, ${trees} trees pushed ${inFlight} at a time, until the last root ran (a parent`,
    `reads its children's results), medians of ${rounds} interleaved rounds. Costs: ${stored} trees of 1 + 10 stored with`,
    "no consumer, then drained; per child, the parent's own share included.",
    '',
    `| figure | this project | ${bull} |`,
    '| --- | --- | --- |',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    ...plainLine,
  ];
}

function main(): void {
  const file = join(ROOT, PAGE);
  const readme = readFileSync(file, 'utf8');
  const from = readme.indexOf(BEGIN);
  const to = readme.indexOf(END);
  if (from < 0 || to < from) throw new Error(`${PAGE} has no ${BEGIN} ... ${END} section`);
  writeFileSync(file, readme.slice(0, from) + section() + readme.slice(to + END.length));
  process.stdout.write(`${PAGE}: the summary written\n`);
}

main();
