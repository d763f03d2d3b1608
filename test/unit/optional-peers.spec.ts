/**
 * The optional peers (prom-client, @opentelemetry/api, @nestjs/terminus) load only when
 * their feature is used: importing the package must not touch them.
 */
/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports */
const PEERS = ['prom-client', '@opentelemetry/api', '@nestjs/terminus'];

describe('optional peer dependencies', () => {
  it('are not loaded by importing the package', () => {
    const loaded: string[] = [];
    jest.isolateModules(() => {
      for (const peer of PEERS) {
        jest.doMock(
          peer,
          () => {
            loaded.push(peer);
            return {};
          },
          { virtual: true },
        );
      }
      require('../../lib');
    });
    expect(loaded).toEqual([]);
  });

  it('fail with a text that names the package when a feature needs a missing one', () => {
    jest.isolateModules(() => {
      jest.doMock('prom-client', () => {
        throw Object.assign(new Error("Cannot find module 'prom-client'"), { code: 'MODULE_NOT_FOUND' });
      });
      const { RedisAckQueueMetrics } = require('../../lib') as typeof import('../../lib');
      expect(() => new RedisAckQueueMetrics({} as never)).toThrow(/optional peer dependency "prom-client": install it/);
    });
  });
});
