import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  describeOnline,
  exec,
  installedVersion,
  npmInstall,
  outputOf,
  packTarball,
  PEER_TROUBLE,
} from './support/npm-apps';

/**
 * The package and its optional peers installed one `npm install` at a time, with npm's default
 * settings, in new Nest 11 and Nest 12 apps: the package first and then the peers, and the other
 * way round. No install may fail or report a peer conflict, and `npm ls --all` must be clean.
 *
 * Where @nestjs/microservices is left out, `nestjs-redis-ack-queue/microservices` must fail to
 * load, by `require` and by `import`, with the library's error that names it.
 *
 * npm reads the peers of optional peers too: @nestjs/terminus has typeorm as an optional peer,
 * and typeorm has ioredis ^5.0.4; with ioredis ^6 alone, `npm install @nestjs/terminus` after
 * this package failed with ERESOLVE (issue 22).
 */
const MAJORS = [11, 12] as const;

/**
 * The optional peers as a user adds them, the latest of each: @nestjs/microservices asked for
 * by major, since its latest (12) requires Nest 12 and npm refuses it beside Nest 11 with or
 * without this package.
 */
const optionalPeers = (major: number) => [
  '@nestjs/terminus',
  'prom-client',
  '@opentelemetry/api',
  `@nestjs/microservices@^${major}`,
];

/**
 * The installs of each case, one `npm install` each, after the app's own. The third is what an
 * app does to keep ioredis 6 (npm otherwise picks 5, the newest that typeorm's range accepts), up
 * to the install that used to fail.
 */
const ORDERS = [
  { order: 'the package first', specs: (tarball: string, major: number) => [tarball, ...optionalPeers(major)] },
  { order: 'the peers first', specs: (tarball: string, major: number) => [...optionalPeers(major), tarball] },
  {
    order: 'ioredis 6, the package, then terminus',
    specs: (tarball: string) => ['ioredis@^6', tarball, '@nestjs/terminus'],
  },
] as const;

/** What `nest new` puts in dependencies, at the given Nest major. */
const nestApp = (major: number) => ({
  name: `ackq-order-nest${major}`,
  private: true,
  dependencies: {
    '@nestjs/common': `^${major}.0.0`,
    '@nestjs/core': `^${major}.0.0`,
    '@nestjs/platform-express': `^${major}.0.0`,
    'reflect-metadata': '^0.2.2',
    rxjs: '^7.8.1',
  },
});

interface Chain {
  /** Each install that failed or reported a peer conflict, with what npm said. */
  problems: string[];
  ioredis?: string;
  /** Without @nestjs/microservices: what importing the transport's entry point printed, by `require` and `import`. */
  transportWithoutPeer?: string[];
}

/** Loads `nestjs-redis-ack-queue/microservices` in `dir` with `require` and with `import`; returns what each printed. */
function loadTransport(dir: string): Promise<string[]> {
  const loads = [
    ['-e', "require('nestjs-redis-ack-queue/microservices')"],
    ['--input-type=module', '-e', "import 'nestjs-redis-ack-queue/microservices'"],
  ];
  return Promise.all(
    loads.map((args) =>
      exec(process.execPath, args, dir).then(
        () => 'loaded',
        (error: unknown) => outputOf(error),
      ),
    ),
  );
}

describeOnline('installing the package and its optional peers one at a time', () => {
  let work: string;
  const chains = new Map<string, Chain>();

  async function runChain(dir: string, specs: string[]): Promise<Chain> {
    const problems: string[] = [];
    for (const spec of specs) {
      try {
        const output = await npmInstall(dir, [spec]);
        if (PEER_TROUBLE.test(output)) problems.push(`npm install ${spec}:\n${output}`);
      } catch (error) {
        problems.push(`npm install ${spec} failed:\n${outputOf(error)}`);
        return { problems };
      }
    }
    await exec('npm', ['ls', '--all'], dir).catch((error: unknown) =>
      problems.push(`npm ls --all:\n${outputOf(error)}`),
    );
    const withoutPeer = !specs.some((spec) => spec.startsWith('@nestjs/microservices'));
    return {
      problems,
      ioredis: installedVersion(dir, 'ioredis'),
      transportWithoutPeer: withoutPeer ? await loadTransport(dir) : undefined,
    };
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'ackq-order-'));
    const tarball = await packTarball(work);
    // One base install per major, copied for each case; all the cases run at once.
    await Promise.all(
      MAJORS.map(async (major) => {
        const base = join(work, `nest${major}`);
        mkdirSync(base);
        writeFileSync(join(base, 'package.json'), JSON.stringify(nestApp(major), null, 2));
        await npmInstall(base);
        await Promise.all(
          ORDERS.map(async ({ order, specs }, index) => {
            const dir = `${base}-${index}`;
            cpSync(base, dir, { recursive: true });
            chains.set(`${major} ${order}`, await runChain(dir, specs(tarball, major)));
          }),
        );
      }),
    );
    console.log(
      [...chains].map(([name, chain]) => `Nest ${name}: ioredis ${chain.ioredis ?? '(not reached)'}`).join('\n'),
    );
  }, 280_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(MAJORS.flatMap((major) => ORDERS.map(({ order }) => ({ major, order }))))(
    'on Nest $major, $order: every install succeeds without a peer conflict and npm ls --all is clean',
    ({ major, order }) => {
      const chain = chains.get(`${major} ${order}`);
      expect(chain?.problems).toEqual([]);
      if (order.startsWith('ioredis 6')) expect(chain?.ioredis).toMatch(/^6\./);
      // Its optional peer left out: the transport's entry point names it, in CommonJS and ES modules.
      if (order.startsWith('ioredis 6')) expect(chain?.transportWithoutPeer).toHaveLength(2);
      for (const output of chain?.transportWithoutPeer ?? []) {
        expect(output).toMatch(
          /MissingPeerDependencyError: .*needs the optional peer dependency "@nestjs\/microservices"/,
        );
      }
    },
  );
});
