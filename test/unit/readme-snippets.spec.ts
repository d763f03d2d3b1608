import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { compileSnippets, extractSnippets } from '../support/readme-snippets';

const ROOT = join(__dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
/** docs/*.md: their blocks are excerpts (imports added, the app's own parts as placeholders). */
const DOCS = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.md') && !file.startsWith('api'))
  .map((file) => join(ROOT, 'docs', file));

describe('README', () => {
  it('has TypeScript blocks to check', () => {
    expect(extractSnippets(README).length).toBeGreaterThanOrEqual(3);
  });

  // The compiler options include isolatedModules and emitDecoratorMetadata, as `nest new` sets them:
  // a handler naming an interface it imported plainly fails here with TS1272.
  it('every ```ts block is a whole file that compiles as written, with its own imports', () => {
    // The Vitest example needs vitest, which this repository does not install: test/package/ runs it.
    const snippets = extractSnippets(README).filter(({ marker }) => marker !== 'test: vitest');
    const problems = compileSnippets(snippets, { complete: true }).map(
      ({ line, text }) => `README.md:${line}: ${text}`,
    );
    expect(problems).toEqual([]);
  }, 60_000);

  it('a block that does not compile is reported at its README line', () => {
    const markdown = [
      '# t',
      '',
      '```ts',
      'const queue = new RedisAckQueueService();',
      'await queue.pusj("a", 1);',
      '```',
      '',
    ].join('\n');
    const snippets = extractSnippets(markdown);
    expect(snippets).toEqual([
      { line: 4, code: 'const queue = new RedisAckQueueService();\nawait queue.pusj("a", 1);' },
    ]);
    const problems = compileSnippets(snippets);
    expect(problems.map(({ line }) => line)).toEqual([5]);
    expect(problems[0].text).toMatch(/^TS\d+: Property 'pusj' does not exist on type 'RedisAckQueueService'/);
    // As a whole file, the missing import is reported too.
    expect(compileSnippets(snippets, { complete: true })[0].text).toMatch(/Cannot find name 'RedisAckQueueService'/);
  }, 60_000);

  it('an interface imported plainly into a decorated signature fails, as in a nest new project (TS1272)', () => {
    const file = (type: string) => [
      "import { Injectable } from '@nestjs/common';",
      `import { QueueHandler, ${type} } from 'nestjs-redis-ack-queue';`,
      '@Injectable()',
      'export class Handlers {',
      "  @QueueHandler('t')",
      `  handle(payload: unknown, context: ${type}) {}`,
      '}',
    ];
    const problems = compileSnippets(
      [
        { line: 1, code: file('TopicLimits').join('\n') },
        { line: 100, code: file('MessageContext').join('\n') },
      ],
      { complete: true },
    );
    // TopicLimits is only a type; MessageContext also has a value of its name, so it imports plainly.
    expect(problems.filter(({ text }) => text.startsWith('TS1272:')).map(({ line }) => line)).toEqual([6]);
    expect(problems.filter(({ line }) => line >= 100)).toEqual([]);
  }, 60_000);
});

describe('docs/', () => {
  // One program for every page: building it is what takes the time.
  const snippets = DOCS.flatMap((file) =>
    extractSnippets(readFileSync(file, 'utf8')).map((snippet) => ({ ...snippet, file: relative(ROOT, file) })),
  );
  /** A test file marked for the nest new apps (test/package/): whole, with its own imports. */
  const isTestFile = ({ marker }: { marker?: string }) => marker?.startsWith('test:') === true;

  it("every ```ts block compiles against the library (imports added, placeholders for the app's own parts)", () => {
    const excerpts = snippets.filter((snippet) => !isTestFile(snippet));
    expect(excerpts.length).toBeGreaterThan(10);
    const problems = compileSnippets(excerpts).map(({ file, line, text }) => `${file}:${line}: ${text}`);
    expect(problems).toEqual([]);
  }, 120_000);

  it('every block marked as a Jest test file compiles as written, with its own imports', () => {
    // The Vitest ones need vitest, which this repository does not install: test/package/ runs them.
    const files = snippets.filter(({ marker }) => marker === 'test: jest');
    expect(files.length).toBeGreaterThan(0); // docs/testing.md's complete example
    const problems = compileSnippets(files, { complete: true }).map(
      ({ file, line, text }) => `${file}:${line}: ${text}`,
    );
    expect(problems).toEqual([]);
  }, 60_000);
});
