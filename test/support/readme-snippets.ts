import { join, resolve } from 'node:path';
import * as ts from 'typescript';

const ROOT = resolve(__dirname, '../..');
/**
 * Where the snippets' files seem to be: inside the repository, so that they resolve its
 * node_modules and its paths as a file of the repository would. They exist only in memory.
 */
const VIRTUAL_DIR = join(ROOT, '.readme-snippets');

/** One ```ts block of a Markdown file. */
export interface Snippet {
  /** 1-based line, in the Markdown file, of the block's first line of code. */
  line: number;
  code: string;
  /** The Markdown file it comes from, when snippets of several files are compiled at once. */
  file?: string;
  /** The HTML comment on the line before the block, if any: `<!-- test: jest -->` gives `test: jest`. */
  marker?: string;
}

/** A compiler message, placed at its line in the Markdown file. */
export interface SnippetDiagnostic {
  /** The snippet's `file`, if it has one. */
  file?: string;
  line: number;
  text: string;
}

/**
 * Modules a snippet may use without importing them, as a reader's file would import them:
 * each name a snippet mentions (and does not declare itself) is imported from the first of
 * these that exports it.
 */
const MODULES = [
  'nestjs-redis-ack-queue',
  'nestjs-redis-ack-queue/testing',
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/testing',
  '@nestjs/terminus',
  'ioredis',
  'class-validator',
  '@nestjs/microservices',
  'nestjs-redis-ack-queue/microservices',
];

/**
 * What the snippets take from the reader's own app, declared once for all of them: an
 * order type, a mailer service and mail provider, a PDF renderer, merger and archive, the app's root module and
 * handler classes, a Nest app under test, supertest's `request`, @nestjs/config.
 */
const PLACEHOLDERS = `
interface Order { id: string; item: string; amount: number }
declare class Mailer {
  send(orderId: string, options?: { signal?: AbortSignal }): Promise<void>;
  readonly sent: string[];
}
declare const mailer: Mailer;
/** A database client, as the batch example writes to it. */
declare const db: { insertMany(rows: object[], options: { signal: AbortSignal }): Promise<void> };
/** A mail provider's HTTP API, as the rate-limit example calls it. */
declare const provider: {
  send(mail: object, options: { signal: AbortSignal }): Promise<{ status: number; headers: Record<string, string> }>;
};
declare class Pager {
  notify(text: string): void;
}
declare class TenantGuard {
  canActivate(context: import('@nestjs/common').ExecutionContext): boolean;
}
declare const app: import('@nestjs/common').INestApplication;
declare function request(server: unknown): { post(path: string): { send(body: object): Promise<unknown> } };
declare function renderPdf(invoiceId: string, options: { signal: AbortSignal }): Promise<Uint8Array>;
declare function compressPdf(pdf: Uint8Array): Uint8Array;
declare const archive: { save(key: string, data: Uint8Array): Promise<void> };
declare function mergePdfs(files: string[]): Promise<string>;
declare class AppModule {}
/** A test's private Redis (docs/testing.md). */
declare const redis: import('nestjs-redis-ack-queue/testing').TestRedis;
declare class OrderHandlers {
  sendConfirmation(payload: { orderId: string }, context: import('nestjs-redis-ack-queue').MessageContext): Promise<void>;
}
declare class ReportHandlers {}
declare class ConfigModule {}
declare class ConfigService { get<T = string>(key: string): T }
declare const kms: { decryptDataKey(name: string): Promise<Uint8Array> };
/** The app's database as docs/outbox.md uses it: TypeORM, Prisma, MikroORM, Drizzle, Kysely and pg, each in brief. */
declare const dataSource: {
  transaction<T>(work: (manager: { save(entity: string, row: object): Promise<object> }) => Promise<T>): Promise<T>;
};
declare const prisma: { $transaction<T>(work: (tx: object) => Promise<T>): Promise<T> };
declare const orm: { em: { transactional<T>(work: (em: object) => Promise<T>): Promise<T> } };
declare const drizzleDb: { transaction<T>(work: (tx: object) => Promise<T>): Promise<T> };
declare const kyselyDb: { transaction(): { execute<T>(work: (trx: object) => Promise<T>): Promise<T> } };
declare const pool: { connect(): Promise<{ query(sql: string): Promise<unknown>; release(): void }> };
`;

/** Every ```ts (or ```typescript) block of `markdown`, with where it starts; indented blocks too. */
export function extractSnippets(markdown: string): Snippet[] {
  const lines = markdown.split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ts|typescript)\s*$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
    if (end === lines.length) throw new Error(`the code block opened at line ${i + 1} is never closed`);
    const marker = /^\s*<!--\s*(.*?)\s*-->\s*$/.exec(lines[i - 1] ?? '')?.[1];
    snippets.push({
      ...(marker !== undefined && { marker }),
      line: start + 1,
      code: lines
        .slice(start, end)
        .map((l) => l.slice(indent))
        .join('\n'),
    });
    i = end;
  }
  return snippets;
}

/** The repository's compiler options (tsconfig.json), with no output. */
function repoOptions(): ts.CompilerOptions {
  const file = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  if (file.error) throw new Error(ts.flattenDiagnosticMessageText(file.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(file.config, ts.sys, ROOT);
  return { ...options, noEmit: true, declaration: false, sourceMap: false };
}

/** A program over in-memory files (path -> text) plus whatever they import from the disk. */
function programOf(files: Map<string, string>, options: ts.CompilerOptions, old?: ts.Program): ts.Program {
  const disk = ts.createCompilerHost(options);
  const host: ts.CompilerHost = {
    ...disk,
    getCurrentDirectory: () => ROOT,
    fileExists: (path) => files.has(path) || disk.fileExists(path),
    readFile: (path) => files.get(path) ?? disk.readFile(path),
  };
  host.getSourceFile = (path, language, ...rest) => {
    const text = files.get(path);
    return text === undefined
      ? disk.getSourceFile(path, language, ...rest)
      : ts.createSourceFile(path, text, language, true);
  };
  return ts.createProgram({ rootNames: [...files.keys()], options, host, oldProgram: old });
}

/** An export a snippet may use: its module, and whether it is only a type (then imported with `type`). */
interface Export {
  module: string;
  typeOnly: boolean;
}

/** Names each module of MODULES exports (values and types), the first module winning. */
function exportsOf(options: ts.CompilerOptions): { exports: Map<string, Export>; program: ts.Program } {
  const probe = join(VIRTUAL_DIR, 'exports.mts');
  const program = programOf(
    new Map([[probe, MODULES.map((m, i) => `import * as m${i} from '${m}';\nexport { m${i} };\n`).join('')]]),
    options,
  );
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(probe)!;
  const exports = new Map<string, Export>();
  MODULES.forEach((module, i) => {
    const symbol = checker.getSymbolsInScope(source, ts.SymbolFlags.Alias).find((s) => s.name === `m${i}`);
    const target = symbol && checker.getAliasedSymbol(symbol);
    const names = target ? checker.getExportsOfModule(target) : [];
    if (names.length === 0) throw new Error(`cannot resolve ${module} for the README snippets`);
    for (const exported of names) {
      const resolved = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const typeOnly = (resolved.flags & ts.SymbolFlags.Value) === 0;
      if (!exports.has(exported.name)) exports.set(exported.name, { module, typeOnly });
    }
  });
  return { exports, program };
}

/** Whether `name` is a reserved word (`default`, `class`...), which no import can bind. */
function isReservedWord(name: string): boolean {
  const kind = ts.identifierToKeywordKind(ts.factory.createIdentifier(name));
  return kind !== undefined && kind >= ts.SyntaxKind.FirstReservedWord && kind <= ts.SyntaxKind.LastReservedWord;
}

/** Names a snippet declares itself (classes, functions, variables, types): never imported. */
function declaredNames(code: string): Set<string> {
  const names = new Set<string>();
  for (const match of code.matchAll(/\b(?:class|function|const|let|var|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g))
    names.add(match[1]);
  return names;
}

/**
 * Compiles every snippet as an ES module (top-level await allowed, as in a test body) with
 * the repository's compiler options, 'nestjs-redis-ack-queue' mapped to lib/ by its paths,
 * in memory (nothing is written). Returns the compiler's messages at their lines of the
 * Markdown file; line 0 for one about the options. With `complete`, each snippet is compiled
 * as the whole file a reader copies: its own imports only, no placeholders.
 */
export function compileSnippets(snippets: Snippet[], { complete = false } = {}): SnippetDiagnostic[] {
  const options = repoOptions();
  const { exports, program: probe } = exportsOf(options);
  const files = new Map<string, string>(complete ? [] : [[join(VIRTUAL_DIR, 'placeholders.d.ts'), PLACEHOLDERS]]);
  const placed = snippets.map((snippet, i) => {
    if (complete) {
      // A complete file, as a reader copies it: its own imports only, no placeholders.
      const file = join(VIRTUAL_DIR, `file-${i + 1}.mts`);
      files.set(file, snippet.code.endsWith('\n') ? snippet.code : `${snippet.code}\n`);
      return { file, snippet, offset: 0 };
    }
    const own = declaredNames(snippet.code);
    const used = new Set([...snippet.code.matchAll(/\b[A-Za-z_$][\w$]*\b/g)].map(([name]) => name));
    const imports = MODULES.map((module) => {
      // A reserved word (`default`, met in a comment) is never a name to import.
      const names = [...used]
        .filter((name) => exports.get(name)?.module === module && !own.has(name) && !isReservedWord(name))
        .sort();
      const list = names.map((name) => (exports.get(name)!.typeOnly ? `type ${name}` : name));
      return names.length > 0 ? `import { ${list.join(', ')} } from '${module}';` : '';
    }).filter(Boolean);
    const header = [...imports, 'export {};'];
    const file = join(VIRTUAL_DIR, `snippet-${i + 1}.mts`);
    files.set(file, `${header.join('\n')}\n${snippet.code}\n`);
    return { file, snippet, offset: header.length };
  });
  const program = programOf(files, options, probe);
  const diagnostics: SnippetDiagnostic[] = program
    .getOptionsDiagnostics()
    .map((d) => ({ line: 0, text: ts.flattenDiagnosticMessageText(d.messageText, '\n') }));
  for (const { file, snippet, offset } of placed) {
    const source = program.getSourceFile(file)!;
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const at = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
      const text = `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      // A message about the imports added above counts for the block's first line.
      diagnostics.push({ file: snippet.file, line: snippet.line + Math.max(0, at - offset), text });
    }
  }
  return diagnostics;
}
