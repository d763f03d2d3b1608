// Packs the package as npm would publish it, then checks the tarball: only the files a user needs
// (listed below), every entry point present (exports and typesVersions, each subpath in both), no
// entry point loading an optional peer that is not its own, no source map pointing at a file not
// shipped; then publint and Are the Types Wrong (CJS and ESM consumers, node10 / node16 / bundler
// resolution).
// Run after a build: `npm run check:package` does both.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';

const root = join(import.meta.dirname, '..');
const allowed = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^CHANGELOG\.md$/,
  /^docs\/.+\.md$/, // the guides the README links to
  /^docs\/[^/]+\.png$/, // the README's screenshots
  /^dist\/.+\.js$/,
  /^dist\/.+\.d\.ts$/,
  /^dist\/.+\.lua$/, // the Lua scripts, wherever under lib/ they live (nest-cli.json copies them)
  /^sql\/outbox\.sql$/, // the outbox table's migration (outboxMigrationSql() prints the same)
  /^dist\/dashboard\/assets\/[^/]+\.(html|css|js)$/, // the dashboard's page, served as they are
];
// Tests and fixtures never ship, even compiled into dist/.
const denied = [
  /(^|\/)(test|tests|__tests__|fixtures?)\//,
  /\.(spec|int-spec|e2e-spec|fault-spec|test)\.(d\.)?[cm]?[jt]s$/,
];
const required = ['package.json', 'README.md', 'LICENSE'];
// The optional peer an entry point may load when imported: its own (the others load lazily,
// when their feature is used, so that no entry point needs them installed).
const peerEntries = { '@nestjs/microservices': './microservices' };

/** Entries of a .tgz as { path, text }: a minimal ustar reader, enough for what npm pack writes. */
function readTarball(file) {
  const tar = gunzipSync(readFileSync(file));
  const entries = [];
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (from, length) => header.toString('utf8', from, from + length).replace(/\0.*$/s, '');
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join('/');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    if (type === '0' || type === '') {
      const text = tar.toString('utf8', at + 512, at + 512 + size);
      entries.push({ path: name.replace(/^package\//, ''), text });
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

/** Every file under lib/ that the build copies as it is (Lua scripts, dashboard assets), as its path under dist/. */
function copiedSources(dir = join(root, 'lib')) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return copiedSources(path);
    if (!entry.name.endsWith('.lua') && !/dashboard[\\/]assets$/.test(dir)) return [];
    return [posix.join('dist', relative(join(root, 'lib'), path).split(sep).join('/'))];
  });
}

function entryPoints(pkg) {
  const targets = [pkg.main, pkg.types];
  const walk = (value) => {
    if (typeof value === 'string') targets.push(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(pkg.exports);
  walk(pkg.typesVersions);
  return targets.filter(Boolean).map((target) => posix.normalize(target));
}

/** The packages that `start` reaches through `require("...")` calls, following the package's own files. */
function requiredPackages(texts, start) {
  const seen = new Set();
  const packages = new Set();
  const stack = [start];
  while (stack.length > 0) {
    const path = stack.pop();
    if (seen.has(path)) continue;
    seen.add(path);
    for (const [, spec] of (texts.get(path) ?? '').matchAll(/\brequire\("([^"]+)"\)/g)) {
      if (!spec.startsWith('.'))
        packages.add(
          spec
            .split('/')
            .slice(0, spec.startsWith('@') ? 2 : 1)
            .join('/'),
        );
      else {
        const base = posix.normalize(posix.join(posix.dirname(path), spec));
        const target = [`${base}.js`, `${base}/index.js`, base].find((candidate) => texts.has(candidate));
        if (target) stack.push(target);
      }
    }
  }
  return packages;
}

/** Each exported subpath in typesVersions (node10 resolution), and no optional peer loaded by an entry point not its own. */
function checkEntryPoints(pkg, texts) {
  const problems = [];
  const optional = Object.keys(pkg.peerDependenciesMeta ?? {}).filter(
    (name) => pkg.peerDependenciesMeta[name].optional,
  );
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const name = subpath.replace(/^\.\/?/, '');
    if (typeof target !== 'object') continue; // package.json
    if (name && !pkg.typesVersions?.['*']?.[name]) problems.push(`exports "${subpath}" has no typesVersions entry`);
    const loaded = requiredPackages(texts, posix.normalize(target.default));
    for (const peer of optional) {
      if (loaded.has(peer) && peerEntries[peer] !== subpath) {
        problems.push(`exports "${subpath}" loads the optional peer ${peer} when imported`);
      }
    }
  }
  for (const [peer, subpath] of Object.entries(peerEntries)) {
    if (!requiredPackages(texts, posix.normalize(pkg.exports[subpath].default)).has(peer))
      problems.push(`exports "${subpath}" does not load ${peer}: is peerEntries still right?`);
  }
  return problems;
}

/** The relative links and images of a Markdown text (`[a](docs/x.md#part)`, `![b](docs/y.png)`), without anchors. */
function relativeLinks(markdown) {
  const targets = [...markdown.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1].split('#')[0]);
  return targets.filter((target) => target && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function checkFiles(entries) {
  const paths = new Set(entries.map((entry) => entry.path));
  const problems = [];
  for (const path of paths) {
    const ok = allowed.some((pattern) => pattern.test(path)) && !denied.some((pattern) => pattern.test(path));
    if (!ok) problems.push(`not meant to ship: ${path}`);
  }
  for (const path of required) if (!paths.has(path)) problems.push(`missing: ${path}`);
  const pkg = JSON.parse(entries.find((entry) => entry.path === 'package.json').text);
  for (const target of entryPoints(pkg)) {
    if (!paths.has(target)) problems.push(`package.json points to ${target}, which is not in the tarball`);
  }
  problems.push(...checkEntryPoints(pkg, new Map(entries.map((entry) => [entry.path, entry.text]))));
  const copied = copiedSources();
  if (!copied.some((path) => path.endsWith('.lua'))) problems.push('no .lua file found under lib/');
  if (!copied.includes('dist/dashboard/assets/index.html')) problems.push('no dashboard page found under lib/');
  for (const path of copied) if (!paths.has(path)) problems.push(`copied file not shipped: ${path}`);
  for (const { path, text } of entries.filter((entry) => entry.path.endsWith('.md'))) {
    for (const target of relativeLinks(text)) {
      const linked = posix.normalize(posix.join(posix.dirname(path), target));
      if (!paths.has(linked)) problems.push(`${path} links to ${target}, which is not in the tarball`);
    }
  }
  for (const { path, text } of entries) {
    const map = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1];
    if (map && !map.startsWith('data:') && !paths.has(posix.join(posix.dirname(path), map))) {
      problems.push(`${path} names a source map that is not shipped: ${map}`);
    }
  }
  return { paths, copied, problems };
}

function run(label, bin, args) {
  console.log(`\n== ${label}`);
  const result = spawnSync(join(root, 'node_modules', '.bin', bin), args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${label} failed (exit ${result.status ?? result.signal})`);
}

const workDir = mkdtempSync(join(tmpdir(), 'ackq-pack-'));
try {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', workDir], { cwd: root, encoding: 'utf8' }),
  );
  const tarball = join(workDir, packed.filename);
  const { paths, copied, problems } = checkFiles(readTarball(tarball));
  const byKind = {};
  for (const path of paths) {
    const kind = /(\.d\.ts|\.[^./]+)$/.exec(path)?.[1] ?? path;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  console.log(`== ${packed.filename}: ${paths.size} files, ${packed.size} bytes packed`);
  console.log(
    Object.entries(byKind)
      .map(([kind, count]) => `${count} ${kind}`)
      .join(', '),
  );
  console.log(`${copied.length} Lua scripts and dashboard assets from lib/, all shipped unless listed below`);
  if (problems.length > 0) {
    problems.forEach((problem) => console.error(`  ✗ ${problem}`));
    throw new Error(`${problems.length} problem(s) in the tarball's files`);
  }
  console.log('files: ok');
  run('publint', 'publint', ['run', '--strict', tarball]);
  run('Are the Types Wrong', 'attw', ['--profile', 'strict', '--format', 'table-flipped', '--no-color', tarball]);
} catch (error) {
  console.error(`\ncheck:package: ${error.message}`);
  process.exitCode = 1;
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
