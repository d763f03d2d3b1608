import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * The README and docs/ as the registry's page and the packed tarball show them: a relative link
 * must reach a file the package ships (docs/, README, CHANGELOG, LICENSE) and, with an anchor, one
 * of its headings; a link into this repository on GitHub must name a file that exists here.
 */
const ROOT = join(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  repository?: { url?: string } | string;
};
const repositoryUrl = (typeof manifest.repository === 'string' ? manifest.repository : (manifest.repository?.url ?? ''))
  .replace(/^git\+/, '')
  .replace(/\.git$/, '');
const repositoryPath = repositoryUrl.replace('https://github.com/', '');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md') && !file.startsWith('api'))
    .map((file) => join('docs', file)),
];
const SHIPPED = /^(README\.md|CHANGELOG\.md|LICENSE|docs\/.+\.(md|png))$/;

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => slug(heading)));
}

/** Every [text](target) outside code blocks and code spans. */
function linksOf(page: string): string[] {
  const text = readFileSync(join(ROOT, page), 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target);
}

function problemOf(page: string, target: string): string | undefined {
  if (/^https?:\/\//.test(target)) {
    const inRepository = new RegExp(
      `^https://(github\\.com/${repositoryPath}/(blob|tree)/main|raw\\.githubusercontent\\.com/${repositoryPath}/main)/([^#]+)`,
    ).exec(target);
    if (inRepository && !existsSync(join(ROOT, inRepository[3]))) return `${target}: no such file in the repository`;
    return undefined;
  }
  if (target.startsWith('mailto:')) return undefined;
  const [path, anchor] = target.split('#');
  const file = path === '' ? page : relative(ROOT, join(ROOT, dirname(page), path));
  if (!existsSync(join(ROOT, file))) return `${target}: no such file`;
  if (!SHIPPED.test(file)) return `${target}: ${file} is not in the package; link to the repository instead`;
  if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(file).has(anchor))
    return `${target}: ${file} has no heading #${anchor}`;
  return undefined;
}

/**
 * Folders of the repository that the package does not ship (docs/ and dist/ it does), as a shipped page
 * would name them: `lib/engine/`, `test/core/push.int-spec.ts`. (Files at the top, such as tsconfig.json,
 * are names the reader's own project has too.)
 */
const UNSHIPPED = readdirSync(ROOT, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !['node_modules', '.git', 'docs', 'dist'].includes(entry.name))
  .map(({ name }) => name);
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const UNSHIPPED_PATH = new RegExp(`(?<![\\w./-])(?:${UNSHIPPED.map(escape).join('|')})/[\\w./*-]*`, 'g');

/**
 * Paths of the repository that `page` names outside a link into the repository: a reader of the
 * installed package has no such file, so each must be a link to it on GitHub (or go).
 */
function unlinkedRepositoryPaths(page: string, text = readFileSync(join(ROOT, page), 'utf8')): string[] {
  const repositoryLink = new RegExp(`\\[[^\\]]*\\]\\(${escape(repositoryUrl)}/[^)]*\\)`, 'g');
  return text.split('\n').flatMap((line, i) =>
    [...line.replace(repositoryLink, '').matchAll(UNSHIPPED_PATH)].map(
      ([path]) => `${page}:${i + 1}: ${path.replace(/\.$/, '')}`, // a sentence's full stop is no part of it
    ),
  );
}

describe('links of the README and docs/', () => {
  it('package.json names the repository and homepage', () => {
    expect(repositoryUrl).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
  });

  it.each(PAGES)('%s: every link resolves in the package or points into the repository', (page) => {
    const problems = linksOf(page)
      .map((target) => problemOf(page, target))
      .filter(Boolean);
    expect(problems).toEqual([]);
  });

  it.each(PAGES)('%s: names no repository path that the package does not ship, except as a link to it', (page) => {
    expect(unlinkedRepositoryPaths(page)).toEqual([]);
  });

  it('docs/README.md, the index, links every page of docs/', () => {
    const listed = new Set(linksOf('docs/README.md').map((target) => join('docs', target.split('#')[0])));
    expect(PAGES.filter((page) => page.startsWith('docs/') && page !== 'docs/README.md' && !listed.has(page))).toEqual(
      [],
    );
  });

  it('a repository path outside a link is reported; in a link to the repository, or shipped, it is not', () => {
    const text = [
      'See `lib/engine/lua/` and test/core/push.int-spec.ts, or sample-app/.',
      `Linked: [\`test/core/\`](${repositoryUrl}/tree/main/test/core); shipped: docs/flows.md, dist/index.js.`,
      'Not paths: a topic/name, attest/x, /tmp/lib/x.',
    ].join('\n');
    expect(unlinkedRepositoryPaths('docs/x.md', text)).toEqual([
      'docs/x.md:1: lib/engine/lua/',
      'docs/x.md:1: test/core/push.int-spec.ts',
      'docs/x.md:1: sample-app/',
    ]);
  });

  it('a link to a missing heading, a file the package does not ship, or a missing repository file is reported', () => {
    expect(problemOf('README.md', 'docs/nest.md#no-such-heading')).toMatch(/no heading/);
    expect(problemOf('README.md', 'sample-app/main.ts')).toMatch(/not in the package/);
    expect(problemOf('README.md', `${repositoryUrl}/blob/main/no/such/file.ts`)).toMatch(/no such file/);
    expect(problemOf('docs/nest.md', '../README.md#install')).toBeUndefined();
  });
});
