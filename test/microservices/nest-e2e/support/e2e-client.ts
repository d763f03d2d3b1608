import type { ClientOptions } from '@nestjs/microservices';
import { RedisAckQueueClient, type RedisAckQueueClientOptions } from '../../../../lib/microservices';

/**
 * Where the ported controllers' `@Client()` connects: Nest's own controllers name
 * `Transport.REDIS` on localhost; these name this transport, and each spec file points it at its
 * private Redis (useE2eRedis) before it builds an app. Jest loads a fresh copy per test file.
 */
export const e2eClientOptions: RedisAckQueueClientOptions = {};

/**
 * What the ported controllers give `@Client()` in place of `{ transport: Transport.REDIS }`. Its
 * type lists Nest's own transports only, while the factory behind it takes a `customClass`.
 */
export const E2E_CLIENT = { customClass: RedisAckQueueClient, options: e2eClientOptions } as unknown as ClientOptions;

/** Points every `@Client(E2E_CLIENT)` at this connection (call it in beforeAll, before the first app). */
export function useE2eClientOptions(options: RedisAckQueueClientOptions): void {
  Object.assign(e2eClientOptions, options);
}
