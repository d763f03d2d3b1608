// Where a flow child's Redis commands go: TREES trees of 1 parent + 10 children pushed with no
// consumer (20 pushFlow in flight), then drained at concurrency 50, on one private redis-server
// watched with MONITOR. Each command run inside a script is counted under that script (MONITOR
// lists a script's call, then the commands it runs), the others under their own name; all per
// child. The counts depend on the code, not on the machine (batch sizes aside: they follow how
// many acks a consumer gathers, which its load sets). Run: npm run bench:flow-commands [-- --trees=2000]
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { QUEUE_SCRIPTS, scriptSource, type QueueScriptName } from '../lib/engine/scripts/queue-scripts';
import { sleep } from './adapter';
import { nodesOf, oursFlows } from './flow-systems';
import { BenchRedis } from './redis-server';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const TREES = arg('trees', 2_000);
const SHAPE = [10];
const CHILDREN = TREES * SHAPE[0];

interface Tally {
  /** Script name (or top-level command) -> calls. */
  calls: Map<string, number>;
  /** Script name -> command run inside it -> calls. */
  inner: Map<string, Map<string, number>>;
}

const bump = <K>(map: Map<K, number>, key: K, by = 1) => map.set(key, (map.get(key) ?? 0) + by);

/** Counts what the server runs from now until stop(), by script. */
async function watch(admin: Redis): Promise<{ tally: Tally; stop(): Promise<void> }> {
  const names = new Map<string, string>();
  for (const name of Object.keys(QUEUE_SCRIPTS) as QueueScriptName[]) {
    names.set(createHash('sha1').update(scriptSource(name)).digest('hex'), name);
  }
  const tally: Tally = { calls: new Map(), inner: new Map() };
  let current = '';
  const monitor = await admin.monitor();
  admin.disconnect();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    const command = args[0].toLowerCase();
    if (source === 'lua') {
      const inner = tally.inner.get(current) ?? new Map<string, number>();
      tally.inner.set(current, inner);
      bump(inner, command);
      return;
    }
    if (['info', 'monitor', 'config'].includes(command)) return;
    current = command.startsWith('evalsha') ? (names.get(args[1]) ?? `evalsha ${args[1].slice(0, 8)}`) : command;
    bump(tally.calls, current);
  });
  return {
    tally,
    async stop() {
      await sleep(300);
      monitor.disconnect();
    },
  };
}

function print(title: string, { calls, inner }: Tally): void {
  const lines = [
    `\n## ${title}, per child (${CHILDREN} children)\n`,
    '| script or command | calls | commands inside |',
  ];
  lines.push('| --- | ---: | --- |');
  let all = 0;
  let scripts = 0;
  for (const [name, n] of [...calls].sort((a, b) => b[1] - a[1])) {
    const inside = inner.get(name) ?? new Map<string, number>();
    const insideTotal = [...inside.values()].reduce((sum, k) => sum + k, 0);
    all += n + insideTotal;
    if (inner.has(name) || name in QUEUE_SCRIPTS) scripts += n;
    const list = [...inside]
      .sort((a, b) => b[1] - a[1])
      .map(([command, k]) => `${command} ${(k / CHILDREN).toFixed(2)}`)
      .join(', ');
    lines.push(`| ${name} | ${(n / CHILDREN).toFixed(3)} | ${(insideTotal / CHILDREN).toFixed(2)}: ${list} |`);
  }
  lines.push(
    '',
    `All commands per child: ${(all / CHILDREN).toFixed(2)}; script calls: ${(scripts / CHILDREN).toFixed(3)}`,
  );
  process.stdout.write(lines.join('\n') + '\n');
}

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  try {
    const system = await oursFlows(redis.url, 'bench.flow-commands', SHAPE);
    await system.push(-1);
    let watching = await watch(redis.admin.duplicate());
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < TREES) await system.push(next++);
      }),
    );
    await watching.stop();
    process.stderr.write('pushed\n');
    print('Pushing', watching.tally);
    const total = (TREES + 1) * nodesOf(SHAPE);
    let seen = 0;
    let finished!: () => void;
    const done = new Promise<void>((resolve) => (finished = resolve));
    watching = await watch(redis.admin.duplicate());
    const consumers = await system.startConsumers(50, () => void (++seen === total && finished()));
    const progress = setInterval(() => process.stderr.write(`handled ${seen} of ${total}\n`), 5_000);
    await done;
    clearInterval(progress);
    await sleep(1_500);
    await consumers.stop();
    await watching.stop();
    print('Consuming', watching.tally);
    await system.close();
  } finally {
    await redis.stop();
  }
}

void main();
