/**
 * The TypeScript blocks of Markdown files, each meant as a complete file a user copies into a
 * new Nest app. A marker, an HTML comment on the last non-blank line before a block's fence,
 * says what to do with it instead of compiling it as src/snippets/<file>-<line>.ts:
 *
 *   <!-- not-compiled: why -->   left out, and listed by the test (a shell fragment, a partial excerpt)
 *   <!-- test: jest -->          a spec file, run by the Nest 11 scaffold's Jest
 *   <!-- test: vitest -->        a spec file, run by the Nest 12 scaffold's Vitest
 */

/** What a block is: a source file, a spec file for one runner, or left out. */
export type BlockKind = 'source' | 'jest' | 'vitest' | 'not-compiled';

/** One ```ts block. */
export interface MarkdownBlock {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** 1-based line of the opening fence: the code's first line is `line + 1`. */
  line: number;
  kind: BlockKind;
  /** Why the block is not compiled (kind 'not-compiled' only). */
  reason?: string;
  code: string;
}

/** A marker that cannot be read, or a block left open: a mistake in the Markdown. */
export class MarkdownBlockError extends Error {}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const TYPESCRIPT = new Set(['ts', 'typescript']);
const MARKER = /^\s*<!--\s*(not-compiled|test)\s*:\s*(.*?)\s*-->\s*$/;
const ANY_MARKER = /^\s*<!--\s*(not-compiled|test)\b/;

/** The marker on the last non-blank line before `index`, as a kind (and reason), or undefined. */
function markerBefore(
  lines: string[],
  index: number,
  where: string,
): Pick<MarkdownBlock, 'kind' | 'reason'> | undefined {
  let previous = index - 1;
  while (previous >= 0 && lines[previous].trim() === '') previous--;
  const text = lines[previous] ?? '';
  if (!ANY_MARKER.test(text)) return undefined;
  const [, name, value] = MARKER.exec(text) ?? [];
  if (name === 'not-compiled' && value) return { kind: 'not-compiled', reason: value };
  if (name === 'test' && (value === 'jest' || value === 'vitest')) return { kind: value };
  throw new MarkdownBlockError(
    `${where}: unreadable marker ${text.trim()}: write <!-- not-compiled: reason -->, <!-- test: jest --> or <!-- test: vitest -->`,
  );
}

/** Every ```ts (or ```typescript) block of one Markdown file, with its marker. */
export function markdownBlocks(file: string, markdown: string): MarkdownBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: MarkdownBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = FENCE.exec(lines[index]);
    if (!open) continue;
    const [, fence, language] = open;
    const close = lines.findIndex(
      (text, at) => at > index && text.trim().startsWith(fence) && /^[`~]+$/.test(text.trim()),
    );
    if (close < 0) throw new MarkdownBlockError(`${file}:${index + 1}: a code block is never closed`);
    if (TYPESCRIPT.has(language.toLowerCase())) {
      const marker = markerBefore(lines, index, `${file}:${index + 1}`) ?? { kind: 'source' };
      blocks.push({ file, line: index + 1, ...marker, code: lines.slice(index + 1, close).join('\n') + '\n' });
    }
    index = close;
  }
  return blocks;
}

/** The block's file name in the scaffold's src/snippets/: `docs/guide.md` line 12 is `docs-guide-md-12`. */
export function snippetName(block: Pick<MarkdownBlock, 'file' | 'line'>): string {
  return `${block.file.replace(/[^A-Za-z0-9]+/g, '-')}-${block.line}`;
}

/** The path, under the scaffold's folder, where a block is written (spec files end in .spec.ts). */
export function snippetPath(block: MarkdownBlock): string {
  const spec = block.kind === 'jest' || block.kind === 'vitest';
  return `src/snippets/${snippetName(block)}${spec ? '.spec' : ''}.ts`;
}

/**
 * tsc's messages (`--pretty false`) with each one in a snippet placed at its Markdown file and
 * line; messages about other files are kept as tsc wrote them.
 */
export function placeDiagnostics(output: string, blocks: MarkdownBlock[]): string[] {
  const byPath = new Map(blocks.map((block) => [snippetPath(block), block]));
  // A message is a line naming its file, then any indented lines that go on with it.
  const messages = output.split(/\n(?=\S)/).filter((text) => /error TS\d+/.test(text));
  return messages.map((text) => {
    const [, path, line, message] = /^(.+?)\((\d+),\d+\): error ([\s\S]*)$/.exec(text.trimEnd()) ?? [];
    const block = byPath.get(path);
    return block ? `${block.file}:${block.line + Number(line)}: ${message}` : text.trimEnd();
  });
}
