import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSnippets, extractSnippets } from '../support/readme-snippets';

const README = readFileSync(join(__dirname, '../../README.md'), 'utf8');

describe('README', () => {
  it('has TypeScript blocks to check', () => {
    expect(extractSnippets(README).length).toBeGreaterThan(0);
  });

  it("every ```ts block compiles against the library (imports added, placeholders for the app's own parts)", () => {
    const problems = compileSnippets(extractSnippets(README)).map(({ line, text }) => `README.md:${line}: ${text}`);
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
  }, 60_000);
});
