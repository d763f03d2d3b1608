/**
 * Five projects: unit (no Redis), integration (private redis-server), cluster (the core,
 * consumer and transport integration suites again, each file on a private 3-master Redis Cluster), e2e (the
 * sample app), faults (private Redis and consumer processes under kills, outages and stalls),
 * and package (the packed tarball installed in new Nest 12 and Nest 11 apps; see test/README.md).
 *
 * Nest 12 is ES modules only: test/support/nest-esm.transform.js compiles it to CommonJS for Jest.
 * With ACKQ_NEST=11 (`npm run test:nest11`), @nestjs/* resolve to test/nest11/node_modules instead;
 * with ACKQ_IOREDIS=5 (`npm run test:ioredis5`), ioredis resolves to test/ioredis5/node_modules.
 */
const { join } = require('node:path');

const nest11 = process.env.ACKQ_NEST === '11';
const nestMajor = nest11 ? 11 : Number(require('./package.json').devDependencies['@nestjs/core'].match(/\d+/)[0]);
const ioredis5 = process.env.ACKQ_IOREDIS === '5';
const ioredisMajor = ioredis5 ? 5 : Number(require('./package.json').devDependencies.ioredis.match(/\d+/)[0]);

const shared = {
  rootDir: __dirname,
  // Node's environment, telling the afterEach hooks whether the test failed (for its log replay).
  testEnvironment: '<rootDir>/test/support/failure-aware-environment.js',
  // The library's log captured in every file: expected warnings quiet, a failed test's log replayed.
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-setup.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
    // Kysely 0.29 and MikroORM 7 (the outbox adapters' tests) are ES modules only too.
    '/node_modules/(@nestjs|@mikro-orm|kysely)/.+\\.js$': '<rootDir>/test/support/nest-esm.transform.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|@mikro-orm|kysely)/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The `nest new` files that test/package copies out: two package.json named "app", not modules.
  modulePathIgnorePatterns: ['<rootDir>/test/package/scaffolds/'],
  moduleNameMapper: {
    '^nestjs-redis-ack-queue$': '<rootDir>/lib',
    '^nestjs-redis-ack-queue/testing$': '<rootDir>/lib/testing',
    '^nestjs-redis-ack-queue/microservices$': '<rootDir>/lib/microservices',
    ...(nest11 && {
      '^@nestjs/(common|core|microservices|platform-express|platform-fastify|testing)(/.*)?$':
        '<rootDir>/test/nest11/node_modules/@nestjs/$1$2',
    }),
    ...(ioredis5 && { '^ioredis$': '<rootDir>/test/ioredis5/node_modules/ioredis' }),
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  // Read by test/consumer/nest-version.int-spec.ts: the run proves the Nest major it says.
  globals: {
    ACKQ_NEST_MAJOR: nestMajor,
    ACKQ_NEST_DIR: nest11 ? join(__dirname, 'test/nest11/node_modules') : join(__dirname, 'node_modules'),
    // Read by test/unit/ioredis-version.spec.ts.
    ACKQ_IOREDIS_MAJOR: ioredisMajor,
    ACKQ_IOREDIS_DIR: ioredis5 ? join(__dirname, 'test/ioredis5/node_modules') : join(__dirname, 'node_modules'),
  },
};

module.exports = {
  testTimeout: 60_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/**/*.spec.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.int-spec.ts'] },
    {
      ...shared,
      displayName: 'cluster',
      testMatch: ['<rootDir>/test/{core,consumer,microservices}/**/*.int-spec.ts'],
      // Read by test/support/queue-fixture.ts: useRedis() starts a cluster instead of one server.
      globals: { ...shared.globals, ACKQ_TOPOLOGY: 'cluster' },
    },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
    { ...shared, displayName: 'faults', testMatch: ['<rootDir>/test/**/*.fault-spec.ts'] },
    { ...shared, displayName: 'package', testMatch: ['<rootDir>/test/**/*.package-spec.ts'], testTimeout: 300_000 },
  ],
};
