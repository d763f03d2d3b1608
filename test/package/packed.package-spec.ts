import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisServer } from '../../support/redis-processes/redis-server';
import {
  describeOnline,
  exec,
  installedVersion,
  npmInstall,
  packTarball,
  PEER_TROUBLE,
  root,
} from './support/npm-apps';

/**
 * The packed tarball as a user gets it: installed beside Nest 12 and Nest 11, each in a new ES
 * module app and a new CommonJS app, with no peer conflict, then built with `tsc` and run by
 * Node itself (no Jest, no transform): app/main.ts until a @QueueHandler has received and acked a
 * pushed message, and app/microservice.ts (the `nestjs-redis-ack-queue/microservices` entry
 * point, with the optional peer @nestjs/microservices) until its server has handled an emit and
 * answered a send. Each Nest major takes each ioredis major the peer range names once (the library
 * is developed on 6; npm picks 5 when @nestjs/terminus's optional peers are around, see
 * install-order.package-spec.ts).
 */
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const APPS = [
  { name: 'nest12-esm', major: 12, type: 'module', module: 'nodenext', format: 'esm', ioredis: 6 },
  { name: 'nest11-cjs', major: 11, type: 'commonjs', module: 'node16', format: 'commonjs', ioredis: 5 },
  // nodenext: TypeScript lets a CommonJS file import Nest 12's ES modules (Node require()s them).
  { name: 'nest12-cjs', major: 12, type: 'commonjs', module: 'nodenext', format: 'commonjs', ioredis: 5 },
  { name: 'nest11-esm', major: 11, type: 'module', module: 'nodenext', format: 'esm', ioredis: 6 },
] as const;

describeOnline('the packed package in new apps', () => {
  let work: string;
  let tarball: string;
  let redis: RedisServer;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ackq-package-'));
    tarball = await packTarball(work);
    redis = await RedisServer.start();
  }, 120_000);

  afterAll(async () => {
    await redis?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(APPS)(
    'installs beside Nest $major and ioredis $ioredis in a $format app without peer errors, delivers a message and serves the transport',
    async (app) => {
      const dir = join(work, app.name);
      mkdirSync(dir);
      const nest = `^${app.major}.0.0`;
      const { 'reflect-metadata': reflectMetadata, rxjs } = manifest.peerDependencies;
      const ioredis = manifest.peerDependencies.ioredis
        .split('||')
        .map((range) => range.trim())
        .find((range) => range.startsWith(`^${app.ioredis}.`));
      expect(ioredis).toBeDefined(); // the peer range names this major
      const dependencies = {
        '@nestjs/common': nest,
        '@nestjs/core': nest,
        '@nestjs/microservices': nest,
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
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions, files: ['main.ts', 'microservice.ts'] }),
      );
      copyFileSync(join(__dirname, 'app/main.ts'), join(dir, 'main.ts'));
      copyFileSync(join(__dirname, 'app/microservice.ts'), join(dir, 'microservice.ts'));

      expect(await npmInstall(dir)).not.toMatch(PEER_TROUBLE);
      await exec('npm', ['ls', '--all'], dir); // exits non-zero on a missing or invalid peer
      expect(installedVersion(dir, '@nestjs/core').split('.')[0]).toBe(String(app.major));
      expect(installedVersion(dir, '@nestjs/microservices').split('.')[0]).toBe(String(app.major));
      expect(installedVersion(dir, 'ioredis').split('.')[0]).toBe(String(app.ioredis));

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

      const transport = await exec(process.execPath, ['dist/microservice.js'], dir, {
        REDIS_URL: redis.url,
        PREFIX: `${app.name}-transport`,
      });
      expect(JSON.parse(transport.stdout.trim().split('\n').pop() ?? '')).toEqual({
        event: { data: { order: 7 }, attempt: 1, topic: 'smoke.shipped' },
        reply: 42,
        format: app.format,
      });
    },
    240_000,
  );
});
