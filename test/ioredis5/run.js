// npm run test:ioredis5: the integration suites against ioredis 5, the older major the peer range
// names (`^5.11.0 || ^6.0.0`; the root's devDependencies have 6). Installs this folder's ioredis 5,
// then runs Jest with ACKQ_IOREDIS=5: jest.config.js maps `ioredis` here, and
// resolve-ioredis5.cjs, preloaded, does the same for the processes the tests spawn.
// test/unit/ioredis-version.spec.ts fails a run that loaded another ioredis than it claims.
// Arguments are passed on to Jest (CI adds --json --outputFile=...).
const { spawnSync } = require('node:child_process');
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '../..');
const manifest = join(__dirname, 'node_modules/ioredis/package.json');
const installed = () => (existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : undefined);

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

if (!installed()?.startsWith('5.')) {
  const args = ['install', '--no-package-lock', '--no-audit', '--no-fund'];
  if (run('npm', args, { cwd: __dirname }) !== 0) process.exit(1);
}
console.log(`Against ioredis@${installed()}`);

const jest = join(root, 'node_modules/.bin/jest');
// `--suites=<path pattern>` narrows the integration files (CI: test/core/); every int-spec by default.
const args = process.argv.slice(2);
const narrowed = args.find((arg) => arg.startsWith('--suites='));
const suites = [
  '--selectProjects',
  'unit',
  'integration',
  '--testPathPatterns',
  narrowed ? narrowed.slice('--suites='.length) : 'int-spec',
  'test/unit/ioredis-version',
];
const preload = `--require ${join(__dirname, 'resolve-ioredis5.cjs')}`;
const env = { ...process.env, ACKQ_IOREDIS: '5', NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${preload}`.trim() };
process.exit(run(jest, [...suites, ...args.filter((arg) => arg !== narrowed)], { cwd: root, env }));
