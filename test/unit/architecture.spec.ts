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

/**
 * The layers of lib/, bottom first: a file imports only from its own folder or a folder of a
 * lower layer (type-only imports included). Folders of one layer (dashboard, cli) do not
 * import each other. index.ts (the public exports) is the top.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['interfaces'],
  ['common'],
  ['errors'],
  ['codecs'],
  ['observability'],
  ['engine'],
  ['queue'],
  ['consumer', 'outbox'],
  ['service'],
  ['metrics'],
  ['nest'],
  ['dashboard', 'cli', 'testing', 'microservices'],
  ['index.ts'],
];

/** The folder of a lib-relative path (a top-level file stands for itself). */
const folderOf = (file: string) => file.split('/')[0];
const layerOf = (file: string) => LAYERS.findIndex((layer) => layer.includes(folderOf(file)));

/** Folder -> the other folders its files import. */
function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const folders = new Map<string, string[]>();
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    const into = new Set(folders.get(from) ?? []);
    for (const target of targets) if (folderOf(target) !== from) into.add(folderOf(target));
    folders.set(from, [...into]);
  }
  return folders;
}

describe('architecture of lib/', () => {
  const graph = importGraph();

  it('has no import circle among files', () => {
    expect(findCycle(graph)).toBeUndefined();
  });

  it('has no import circle among folders', () => {
    expect(findCycle(folderGraph(graph))).toBeUndefined();
  });

  it('places every file in a layer', () => {
    expect([...graph.keys()].filter((file) => layerOf(file) < 0)).toEqual([]);
  });

  it('lets every import run down a layer or stay in its folder, never up or sideways', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        if (folderOf(target) === folderOf(file)) continue;
        if (layerOf(target) >= layerOf(file)) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('reaches Redis only from engine/ (ioredis values imported nowhere else)', () => {
    const outside = filesUnder(LIB)
      .filter((f) => f.endsWith('.ts') && !relative(LIB, f).startsWith('engine/'))
      .filter((f) => /^import (?!type )[^;]*from 'ioredis'/m.test(readFileSync(f, 'utf8')))
      .map((f) => relative(LIB, f));
    expect(outside).toEqual([]);
  });

  it('builds no chain of lib classes: a class extends no class of lib/ but an error class', () => {
    const chains = filesUnder(LIB)
      .filter((f) => f.endsWith('.ts') && !relative(LIB, f).startsWith('errors/'))
      .flatMap((f) =>
        [...readFileSync(f, 'utf8').matchAll(/class (\w+)(?:<[^>]*>)? extends (\w+)/g)].map(
          ([, name, base]) => `${relative(LIB, f)}: ${name} extends ${base}`,
        ),
      )
      // Nest's and Node's own bases are fine (a transport extends @nestjs/microservices' four); a base class of lib/ is not.
      .filter(
        (line) =>
          !/extends (Error|ConfigurableModuleClass|HealthIndicator|Server|ClientProxy|BaseRpcContext|RpcException)$/.test(
            line,
          ),
      );
    expect(chains).toEqual([]);
  });

  it('keeps the testing entry point (nestjs-redis-ack-queue/testing) out of the main one', () => {
    expect([...reach(graph, 'index.ts')].filter((file) => file.startsWith('testing/'))).toEqual([]);
  });

  it("keeps engine/'s roles in layers: codecs and keys, Redis connections, scripts, stores, then its two roots", () => {
    // The engine's sub-folders, bottom first; its own top-level files (the composition root and
    // the consumer's contract) may import from all of them, none of them from those.
    const engineLayers: readonly (readonly string[])[] = [['codecs', 'keys'], ['redis'], ['scripts'], ['stores'], ['']];
    const roleOf = (file: string) => (file.split('/').length > 2 ? file.split('/')[1] : '');
    const engineLayer = (file: string) => engineLayers.findIndex((layer) => layer.includes(roleOf(file)));
    const engineFiles = [...graph.keys()].filter((file) => file.startsWith('engine/'));
    expect(engineFiles.filter((file) => engineLayer(file) < 0)).toEqual([]);
    const upward = engineFiles.flatMap((file) =>
      (graph.get(file) ?? [])
        .filter((target) => target.startsWith('engine/') && roleOf(target) !== roleOf(file))
        .filter((target) => engineLayer(target) >= engineLayer(file))
        .map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('lets the consumer reach the engine only through its interface, never the service', () => {
    for (const file of ['consumer/topic-consumer.ts', 'consumer/queue-poller.ts', 'consumer/lease-keeper.ts']) {
      const reached = reach(graph, file);
      expect([...reached].filter((f) => f.startsWith('service/') || f === 'engine/queue-engine.ts')).toEqual([]);
    }
  });
});
