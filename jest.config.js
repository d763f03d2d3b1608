/**
 * Five projects: unit (no Redis), integration (private redis-server), cluster (the core and
 * consumer integration suites again, each file on a private 3-master Redis Cluster), e2e (the
 * sample app), faults (private Redis and consumer processes under kills, outages and stalls).
 */
const shared = {
  rootDir: __dirname,
  // Node's environment, telling the afterEach hooks whether the test failed (for its log replay).
  testEnvironment: '<rootDir>/test/support/failure-aware-environment.js',
  // The library's log captured in every file: expected warnings quiet, a failed test's log replayed.
  setupFilesAfterEnv: ['<rootDir>/test/support/jest-setup.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: { '^nestjs-redis-ack-queue$': '<rootDir>/lib' },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
};

module.exports = {
  testTimeout: 60_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/**/*.spec.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.int-spec.ts'] },
    {
      ...shared,
      displayName: 'cluster',
      testMatch: ['<rootDir>/test/{core,consumer}/**/*.int-spec.ts'],
      // Read by test/support/queue-fixture.ts: useRedis() starts a cluster instead of one server.
      globals: { ACKQ_TOPOLOGY: 'cluster' },
    },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
    { ...shared, displayName: 'faults', testMatch: ['<rootDir>/test/**/*.fault-spec.ts'] },
  ],
};
