/**
 * Four projects: unit (no Redis), integration (private redis-server), e2e (the sample app),
 * faults (a private redis-server and consumer processes under kills, outages and stalls).
 */
const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
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
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
    { ...shared, displayName: 'faults', testMatch: ['<rootDir>/test/**/*.fault-spec.ts'] },
  ],
};
