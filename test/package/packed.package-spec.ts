import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RedisServer } from '../../support/redis-processes/redis-server';

/**
 * The packed tarball as a user gets it: installed beside Nest 12 in a new ES module app and beside
 * Nest 11 in a new CommonJS app, with no peer conflict, then built from app/main.ts and run by Node
 * itself (no Jest, no transform) until a @QueueHandler has received and acked a pushed message.
 */
const root = join(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const APPS = [
  { name: 'nest12-esm', major: 12, type: 'module', module: 'nodenext', format: 'esm' },
  { name: 'nest11-cjs', major: 11, type: 'commonjs', module: 'node16', format: 'commonjs' },
] as const;

// Without what `npm test` sets for its script (npm_config_local_prefix would send the apps'
// installs to this repository) and test:nest11's preload; the user's npm settings stay.
const inherited = ([key]: [string, unknown]) =>
  !/^(npm_config_local_prefix|npm_lifecycle_|npm_package_|NODE_OPTIONS$)/i.test(key);
const env = Object.fromEntries(Object.entries(process.env).filter(inherited));
const exec = (command: string, args: string[], cwd: string, extra: Record<string, string> = {}) =>
  promisify(execFile)(command, args, { cwd, env: { ...env, ...extra }, timeout: 180_000, maxBuffer: 16 << 20 });

function registryUnreachable(): string | undefined {
  try {
    execFileSync('npm', ['ping'], { env, stdio: 'pipe', timeout: 20_000 });
    return undefined;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error)
      .trim()
      .split('\n')
      .pop();
  }
}

const unreachable = registryUnreachable();
if (unreachable) console.warn(`test/package skipped: the npm registry is unreachable (${unreachable})`);
const describeOnline = unreachable ? describe.skip : describe;

describeOnline('the packed package in new apps', () => {
  let work: string;
  let tarball: string;
  let redis: RedisServer;

  beforeAll(async () => {
    if (!existsSync(join(root, 'dist/index.js')))
      throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    work = mkdtempSync(join(tmpdir(), 'ackq-package-'));
    const packed = JSON.parse((await exec('npm', ['pack', '--json', '--pack-destination', work], root)).stdout) as {
      filename: string;
    }[];
    tarball = join(work, packed[0].filename);
    redis = await RedisServer.start();
  }, 120_000);

  afterAll(async () => {
    await redis?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(APPS)(
    'installs beside Nest $major in a $format app without peer errors and delivers a message',
    async (app) => {
      const dir = join(work, app.name);
      mkdirSync(dir);
      const nest = `^${app.major}.0.0`;
      const { ioredis, 'reflect-metadata': reflectMetadata, rxjs } = manifest.peerDependencies;
      const dependencies = {
        '@nestjs/common': nest,
        '@nestjs/core': nest,
        '@nestjs/platform-express': nest,
        ioredis,
        'nestjs-redis-ack-queue': `file:${tarball}`,
        'reflect-metadata': reflectMetadata,
        rxjs,
      };
      const devDependencies = { '@types/node': manifest.devDependencies['@types/node'] };
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ name: `ackq-${app.name}`, private: true, type: app.type, dependencies, devDependencies }),
      );
      const compilerOptions = {
        module: app.module,
        target: 'ES2022',
        strict: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        skipLibCheck: true,
        types: ['node'],
        rootDir: '.',
        outDir: 'dist',
      };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['main.ts'] }));
      copyFileSync(join(__dirname, 'app/main.ts'), join(dir, 'main.ts'));

      // --prefer-offline: the two apps share the npm cache and most packages.
      const install = await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], dir);
      expect(`${install.stdout}${install.stderr}`).not.toMatch(/ERESOLVE|peer dep|conflicting peer|invalid/i);
      await exec('npm', ['ls', '--all'], dir); // exits non-zero on a missing or invalid peer
      const installed = (name: string) =>
        JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
      expect(installed('@nestjs/core').version.split('.')[0]).toBe(String(app.major));

      await exec(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);
      const { stdout } = await exec(process.execPath, ['dist/main.js'], dir, {
        REDIS_URL: redis.url,
        PREFIX: app.name,
      });
      expect(JSON.parse(stdout.trim().split('\n').pop() ?? '')).toEqual({
        payload: { hello: 'world' },
        attempt: 1,
        stats: { ready: 0, delayed: 0, leased: 0, dead: 0, paused: false },
        format: app.format,
        testingContext: 'smoke.greetings',
      });
      // The command line ships as the package's bin, runnable through npm's link in node_modules/.bin.
      const topics = await exec(join(dir, 'node_modules/.bin/redis-ack-queue'), ['--prefix', app.name, 'topics'], dir, {
        REDIS_URL: redis.url,
      });
      expect(topics.stdout).toBe('smoke.greetings\n');
    },
    240_000,
  );
});
