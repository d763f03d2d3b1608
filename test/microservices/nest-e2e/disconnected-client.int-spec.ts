// Mirrors nestjs/nest integration/microservices/e2e/disconnected-client.spec.ts (its REDIS case),
// with Transport.REDIS swapped for RedisAckQueueClient and supertest for fetch.
import { createServer } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DisconnectedClientController } from './support/disconnected.controller';
import { call, listenOnLoopback } from './support/e2e-http';

/** A loopback port nothing listens on: one the OS just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('Disconnected client', () => {
  let url: string;
  let app: INestApplication;

  beforeEach(async () => {
    const module = await Test.createTestingModule({
      controllers: [DisconnectedClientController],
    }).compile();

    app = module.createNestApplication({ logger: false });
    url = await listenOnLoopback(app);
  });

  it(`REDIS`, async () => {
    // Divergence: Nest's client fails at the first refused connection; this one retries until
    // connectTimeoutMs (5 s by default, 1 s here) and then fails with REDIS_CONNECTION, which
    // the controller maps to the same 408.
    const options = { connection: `redis://127.0.0.1:${await closedPort()}`, connectTimeoutMs: 1_000 };
    expect((await call(url, 'POST', '/', options)).status).toBe(408);
  });

  afterEach(async () => {
    await app.close();
  });
});
