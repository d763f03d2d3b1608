// Jest runs the tests as CommonJS and, on Node before 24.9, cannot require() an ES module (Node
// itself can since 20.19). Nest 12 ships as ES modules only, so Jest compiles its files to
// CommonJS here, with the TypeScript of the devDependencies. Only the module syntax changes:
// `import`/`export` become require/exports, `import()` a require inside a promise, and
// `import.meta.url` the file's own URL. Files of CommonJS packages (Nest 11) pass unchanged.
// Node loads the real ES modules elsewhere: the consumer processes and test/package.
const { createHash } = require('node:crypto');
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const ts = require('typescript');

const SELF = readFileSync(__filename, 'utf8');
const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  allowJs: true,
  esModuleInterop: true,
  sourceMap: false,
};
const typeByFolder = new Map();

/** Whether the nearest package.json above the file says "type": "module". */
function isEsm(filename) {
  const folder = dirname(filename);
  if (!typeByFolder.has(folder)) {
    const manifest = join(folder, 'package.json');
    const esm = existsSync(manifest)
      ? JSON.parse(readFileSync(manifest, 'utf8')).type === 'module'
      : folder !== dirname(folder) && isEsm(folder);
    typeByFolder.set(folder, esm);
  }
  return typeByFolder.get(folder);
}

module.exports = {
  getCacheKey(source, filename) {
    return createHash('sha256').update(SELF).update(ts.version).update(filename).update(source).digest('hex');
  },
  process(source, filename) {
    if (!isEsm(filename)) return { code: source };
    const code = source
      // An ES module's own require (`createRequire(import.meta.url)`, as @nestjs/terminus makes
      // one) is CommonJS' require once compiled: the declaration would clash with it.
      .replace(/^const require = createRequire\(import\.meta\.url\);$/m, '')
      .replace(/\bimport\.meta\.resolve\(/g, "((s) => require('node:url').pathToFileURL(require.resolve(s)).href)(")
      .replace(/\bimport\.meta\.dirname\b/g, '__dirname')
      .replace(/\bimport\.meta\.url\b/g, "require('node:url').pathToFileURL(__filename).href");
    return { code: ts.transpileModule(code, { fileName: filename, compilerOptions }).outputText };
  },
};
