import {
  MarkdownBlockError,
  markdownBlocks,
  placeDiagnostics,
  snippetName,
  snippetPath,
} from './support/markdown-blocks';

const md = (...lines: string[]) => lines.join('\n');

describe('markdownBlocks', () => {
  it('takes the ```ts and ```typescript blocks, at the line of their fence, and no other language', () => {
    const blocks = markdownBlocks(
      'docs/a.md',
      md('# A', '', '```ts', 'const a = 1;', '```', '', '```bash', 'npm i', '```', '```typescript', 'let b;', '```'),
    );
    expect(blocks).toEqual([
      { file: 'docs/a.md', line: 3, kind: 'source', code: 'const a = 1;\n' },
      { file: 'docs/a.md', line: 10, kind: 'source', code: 'let b;\n' },
    ]);
  });

  it('reads the marker on the last non-blank line before a fence', () => {
    const blocks = markdownBlocks(
      'README.md',
      md(
        '<!-- not-compiled: a shell line -->',
        '```ts',
        'npm i x',
        '```',
        '<!-- test: jest -->',
        '',
        '```ts',
        "it('a', () => {});",
        '```',
        '<!--test:vitest-->',
        '```ts',
        "it('b', () => {});",
        '```',
      ),
    );
    expect(blocks.map(({ line, kind, reason }) => ({ line, kind, reason }))).toEqual([
      { line: 2, kind: 'not-compiled', reason: 'a shell line' },
      { line: 7, kind: 'jest', reason: undefined },
      { line: 11, kind: 'vitest', reason: undefined },
    ]);
  });

  it('ignores a fence inside a longer or different fence, and other comments', () => {
    const blocks = markdownBlocks(
      'README.md',
      md('<!-- a note -->', '````md', '```ts', 'x', '```', '````', '~~~ts', 'const y = 2;', '~~~'),
    );
    expect(blocks).toEqual([{ file: 'README.md', line: 7, kind: 'source', code: 'const y = 2;\n' }]);
  });

  it.each([
    ['a marker without a reason', '<!-- not-compiled -->'],
    ['an empty reason', '<!-- not-compiled:  -->'],
    ['an unknown runner', '<!-- test: mocha -->'],
  ])('rejects %s, naming the file and line', (_, marker) => {
    expect(() => markdownBlocks('docs/b.md', md('', marker, '```ts', 'x', '```'))).toThrow(
      new MarkdownBlockError(
        `docs/b.md:3: unreadable marker ${marker}: write <!-- not-compiled: reason -->, <!-- test: jest --> or <!-- test: vitest -->`,
      ),
    );
  });

  it('rejects a block that is never closed', () => {
    expect(() => markdownBlocks('docs/c.md', md('a', '```ts', 'x'))).toThrow(
      'docs/c.md:2: a code block is never closed',
    );
  });
});

describe('snippet files and messages', () => {
  const source = { file: 'docs/guides/setup.md', line: 12, kind: 'source', code: '' } as const;
  const spec = { ...source, line: 40, kind: 'vitest' } as const;

  it('names each block after its file and line; spec blocks end in .spec.ts', () => {
    expect(snippetName(source)).toBe('docs-guides-setup-md-12');
    expect(snippetPath(source)).toBe('src/snippets/docs-guides-setup-md-12.ts');
    expect(snippetPath(spec)).toBe('src/snippets/docs-guides-setup-md-40.spec.ts');
  });

  it("places tsc's messages at the Markdown line, continuation lines kept, other files' messages as they are", () => {
    const output = [
      "src/snippets/docs-guides-setup-md-12.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
      "src/snippets/docs-guides-setup-md-40.spec.ts(1,10): error TS2305: Module 'x' has no exported member 'y'.",
      "  The member 'z' is close.",
      "vitest.config.ts(1,1): error TS2307: Cannot find module 'vitest/config'.",
      '',
    ].join('\n');
    expect(placeDiagnostics(output, [source, spec])).toEqual([
      "docs/guides/setup.md:15: TS2322: Type 'string' is not assignable to type 'number'.",
      "docs/guides/setup.md:41: TS2305: Module 'x' has no exported member 'y'.\n  The member 'z' is close.",
      "vitest.config.ts(1,1): error TS2307: Cannot find module 'vitest/config'.",
    ]);
  });
});
