import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { RedisServer } from '../../support/redis-processes/redis-server';
import { type MarkdownBlock, markdownBlocks, placeDiagnostics, snippetPath } from './support/markdown-blocks';
import { describeOnline, exec, npmInstall, outputOf, packTarball, PEER_TROUBLE, root } from './support/npm-apps';

/**
 * The Markdown's TypeScript blocks as a user takes them: each written as its own file into an app
 * made by `nest new` (test/package/scaffolds/, Nest 11 CommonJS with Jest, Nest 12 ES modules
 * with Vitest) with the packed tarball and the optional peers installed, compiled with the app's
 * own TypeScript and tsconfig, and the blocks marked as tests run by the app's `npm test`
 * against a private redis-server (REDIS_URL). Markers: see support/markdown-blocks.ts.
 */
const SCAFFOLDS = [
  { name: 'nest11', major: 11, runner: 'jest' },
  { name: 'nest12', major: 12, runner: 'vitest' },
] as const;
type Scaffold = (typeof SCAFFOLDS)[number];

/**
 * README.md, whose blocks are whole files a reader copies, and the example that keeps one block of
 * each kind. The blocks of docs/ are excerpts (test/unit/readme-snippets.spec.ts compiles them with
 * their imports added), except the test files marked <!-- test: ... -->, whole files too.
 */
function markdownFiles(): string[] {
  return ['README.md', 'test/package/snippets/example.md'];
}
/** Pages of docs/ whose marked test files run in the apps (docs/testing.md's complete examples). */
const DOCS_WITH_TEST_FILES = ['docs/testing.md'];
/** A block that must not compile: the test fails unless it is reported, at this line. */
const FAILING = 'test/package/snippets/failing.md';
const FAILING_REPORT = `${FAILING}:9: TS2304: Cannot find name 'RedisAckQueueModule'.`;

const blocksOf = (file: string) => markdownBlocks(file, readFileSync(join(root, file), 'utf8'));
const blocks = [
  ...markdownFiles().flatMap(blocksOf),
  ...DOCS_WITH_TEST_FILES.flatMap(blocksOf).filter(({ kind }) => kind === 'jest' || kind === 'vitest'),
];
const failing = blocksOf(FAILING);

/** The blocks compiled in a scaffold: every source block, and the spec blocks of its runner. */
const compiledIn = (scaffold: Scaffold, all: MarkdownBlock[]) =>
  all.filter((block) => block.kind === 'source' || block.kind === scaffold.runner);

/**
 * Tools `nest new` adds that take no part in compiling or running tests (CLI, generators,
 * linters, formatter, coverage, debugging): left out of the install to keep the run short.
 */
const TOOLS =
  /^(@nestjs\/(cli|schematics|mau)|@eslint\/.+|eslint(-.+)?|typescript-eslint|globals|oxlint(-.+)?|prettier|@vitest\/coverage-v8|ts-loader|ts-node|tsconfig-paths|source-map-support)$/;

interface Installed {
  dir: string;
  redis: RedisServer;
  /** npm's output for the tarball and the optional peers. */
  output: string;
}

describeOnline('the Markdown TypeScript blocks in apps made by nest new', () => {
  let work: string;
  const apps = new Map<string, Installed>();

  async function install(scaffold: Scaffold, tarball: string): Promise<Installed> {
    const dir = join(work, scaffold.name);
    cpSync(join(__dirname, 'scaffolds', scaffold.name), dir, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    manifest.devDependencies = Object.fromEntries(
      Object.entries(manifest.devDependencies).filter(([name]) => !TOOLS.test(name)),
    );
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
    await npmInstall(dir);
    const peers = ['@nestjs/terminus', 'prom-client', '@opentelemetry/api', `@nestjs/microservices@^${scaffold.major}`];
    const output = await npmInstall(dir, [tarball, ...peers]);
    for (const block of compiledIn(scaffold, [...blocks, ...failing])) {
      const path = join(dir, snippetPath(block));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, block.code);
    }
    return { dir, redis: await RedisServer.start(), output };
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ackq-snippets-'));
    const tarball = await packTarball(work);
    const installed = await Promise.all(SCAFFOLDS.map((scaffold) => install(scaffold, tarball)));
    SCAFFOLDS.forEach((scaffold, index) => apps.set(scaffold.name, installed[index]));
  }, 280_000);

  afterAll(async () => {
    await Promise.all([...apps.values()].map(({ redis }) => redis.stop()));
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('lists the blocks left out by <!-- not-compiled: reason -->', () => {
    const left = blocks.filter((block) => block.kind === 'not-compiled');
    console.log(
      left.length === 0
        ? 'Every ```ts block is compiled.'
        : `Blocks not compiled:\n${left.map((block) => `  ${block.file}:${block.line}: ${block.reason}`).join('\n')}`,
    );
    expect(blocks.filter((block) => block.kind === 'source').length).toBeGreaterThan(0);
  });

  describe.each(SCAFFOLDS)('Nest $major ($name, $runner)', (scaffold) => {
    it('installs the tarball and the optional peers without a peer conflict', () => {
      expect(apps.get(scaffold.name)?.output).not.toMatch(PEER_TROUBLE);
    });

    it("compiles every block as its own file with the app's TypeScript and tsconfig; a broken block is reported at its line", async () => {
      const { dir } = apps.get(scaffold.name)!;
      const tsc = join(dir, 'node_modules/typescript/bin/tsc');
      const args = [tsc, '-p', 'tsconfig.json', '--pretty', 'false', '--outDir', join(work, `${scaffold.name}-out`)];
      const output = await exec(process.execPath, args, dir).then(
        ({ stdout }) => stdout,
        (error: { stdout?: string }) => error.stdout ?? outputOf(error),
      );
      const problems = placeDiagnostics(output, compiledIn(scaffold, [...blocks, ...failing]));
      expect(problems.filter((problem) => !problem.startsWith(FAILING))).toEqual([]);
      expect(problems.filter((problem) => problem.startsWith(FAILING))).toEqual([FAILING_REPORT]);
    });

    it(`runs the blocks marked <!-- test: ${scaffold.runner} --> with the app's npm test`, async () => {
      const { dir, redis } = apps.get(scaffold.name)!;
      const specs = blocks.filter((block) => block.kind === scaffold.runner).map(snippetPath);
      expect(specs.length).toBeGreaterThan(0); // test/package/snippets/example.md has one of each
      const run = await exec('npm', ['test', '--', 'src/snippets/'], dir, { REDIS_URL: redis.url }).catch(
        (error: unknown) => {
          throw new Error(`npm test failed in the Nest ${scaffold.major} app:\n${outputOf(error)}`);
        },
      );
      const output = `${run.stdout}${run.stderr}`;
      for (const spec of specs) expect(output).toContain(spec.replace(/^src\//, ''));
    });
  });
});
