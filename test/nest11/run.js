// npm run test:nest11: the Nest-facing suites (module, consumer, e2e, the microservices transport, dashboard on Express and Fastify, the testing entry point) against Nest 11.
// Installs this folder's Nest 11 beside the root's Nest 12 (rxjs, reflect-metadata and the rest
// still come from the root node_modules), then runs Jest with ACKQ_NEST=11: jest.config.js maps
// @nestjs/* here, and resolve-nest11.cjs does the same for the processes the tests spawn.
// Arguments are passed on to Jest (CI adds --json --outputFile=...).
const { spawnSync } = require('node:child_process');
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '../..');
const wanted = Object.keys(require('./package.json').dependencies);
const installed = (name) => {
  const manifest = join(__dirname, 'node_modules', name, 'package.json');
  return existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : undefined;
};

function run(command, args, options) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

if (!wanted.every((name) => installed(name)?.startsWith('11.'))) {
  // --omit=peer: Nest's peers (rxjs, reflect-metadata) are the root's, one copy for lib and Nest.
  const args = ['install', '--omit=peer', '--no-package-lock', '--no-audit', '--no-fund'];
  if (run('npm', args, { cwd: __dirname }) !== 0) process.exit(1);
}
console.log(`Against ${wanted.map((name) => `${name}@${installed(name)}`).join(', ')}`);

const jest = join(root, 'node_modules/.bin/jest');
const suites = [
  '--selectProjects',
  'unit',
  'integration',
  'e2e',
  '--testPathPatterns',
  'test/(consumer|e2e|microservices)/',
  'test/dashboard/dashboard-http',
  'test/testing/',
  'test/unit/nest-version',
];
const preload = `--require ${join(__dirname, 'resolve-nest11.cjs')}`;
const env = { ...process.env, ACKQ_NEST: '11', NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${preload}`.trim() };
process.exit(run(jest, [...suites, ...process.argv.slice(2)], { cwd: root, env }));
