import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const LIB = resolve(__dirname, '../../lib');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** lib-relative path -> the lib files it imports (relative imports, type-only ones included). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of filesUnder(LIB).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/from '(\.[^']+)'/g)].map(([, spec]) => {
      const base = resolve(dirname(file), spec);
      const target = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => {
        try {
          return statSync(candidate).isFile();
        } catch {
          return false;
        }
      });
      if (!target) throw new Error(`${relative(LIB, file)} imports ${spec}, which does not exist`);
      return relative(LIB, target);
    });
    graph.set(relative(LIB, file), targets);
  }
  return graph;
}

function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

/** Everything `file` reaches through its imports. */
function reach(graph: Map<string, string[]>, file: string): Set<string> {
  const seen = new Set<string>();
  const stack = [file];
  while (stack.length > 0) {
    for (const next of graph.get(stack.pop()!) ?? []) if (!seen.has(next) && seen.add(next)) stack.push(next);
  }
  return seen;
}

describe('architecture of lib/', () => {
  const graph = importGraph();

  it('has no import circle', () => {
    expect(findCycle(graph)).toBeUndefined();
  });

  it('keeps every file, Lua and the dashboard page included, at 200 lines or fewer', () => {
    const long = filesUnder(LIB)
      .filter((f) => /\.(ts|lua|js|css|html)$/.test(f))
      .map((f) => [relative(LIB, f), readFileSync(f, 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 200);
    expect(long).toEqual([]);
  });

  it('lets the consumer reach the engine only through its interface, never the service', () => {
    for (const file of ['consumer/queue-poller.ts', 'consumer/lease-keeper.ts']) {
      const reached = reach(graph, file);
      expect(
        [...reached].filter((f) => f.startsWith('queue/redis-ack-queue.service') || f === 'engine/queue-engine.ts'),
      ).toEqual([]);
    }
  });

  it('keeps the engine below the queue, consumer and Nest layers', () => {
    for (const [file, targets] of graph) {
      if (!file.startsWith('engine/')) continue;
      expect([file, targets.filter((t) => /^(queue|consumer|nest)\//.test(t))]).toEqual([file, []]);
    }
  });
});
