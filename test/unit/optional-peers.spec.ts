/**
 * The optional peers (prom-client, @opentelemetry/api, @nestjs/terminus) load only when
 * their feature is used: importing the package must not touch them. @nestjs/microservices is
 * loaded by its own entry point only (nestjs-redis-ack-queue/microservices), never the main one.
 */
/* eslint-disable @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports */
const PEERS = ['prom-client', '@opentelemetry/api', '@nestjs/terminus', '@nestjs/microservices'];
const notFound = (name: string) =>
  Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });

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
        throw notFound('prom-client');
      });
      const { RedisAckQueueMetrics } = require('../../lib') as typeof import('../../lib');
      expect(() => new RedisAckQueueMetrics({} as never)).toThrow(/optional peer dependency "prom-client": install it/);
    });
  });

  it('let the microservices entry point load its peer', () => {
    const loaded: string[] = [];
    jest.isolateModules(() => {
      jest.doMock('@nestjs/microservices', () => {
        loaded.push('@nestjs/microservices');
        return jest.requireActual<object>('@nestjs/microservices');
      });
      require('../../lib/microservices');
    });
    expect(loaded).toEqual(['@nestjs/microservices']);
  });

  it('fail the microservices entry point at import with a text that names its missing peer', () => {
    jest.isolateModules(() => {
      jest.doMock('@nestjs/microservices', () => {
        throw notFound('@nestjs/microservices');
      });
      const { MissingPeerDependencyError } = require('../../lib/errors') as typeof import('../../lib/errors');
      let failure: unknown;
      try {
        require('../../lib/microservices');
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(MissingPeerDependencyError);
      expect(failure).toMatchObject({ code: 'MISSING_PEER_DEPENDENCY', peer: '@nestjs/microservices' });
      expect((failure as Error).message).toMatch(
        /nestjs-redis-ack-queue\/microservices needs the optional peer dependency "@nestjs\/microservices": install it/,
      );
    });
  });
});
