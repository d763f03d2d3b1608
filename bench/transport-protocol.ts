// What bench/transport.ts and its server process (bench/transport-server.ts) say to each other over
// IPC, and the patterns both sides use.

/** The two transports measured: this project's, and Nest's built-in `Transport.REDIS`. */
export type TransportSystem = 'ours' | 'nest-redis';

/** The pattern of the `@EventPattern` handler, which counts. */
export const EVENT_PATTERN = 'counted';

/** The pattern of the `@MessagePattern` handler, which adds the two numbers it is sent. */
export const REQUEST_PATTERN = 'sum';

/**
 * From the driver: count from zero and report when `n` events are seen; report the count; report
 * the process' CPU time; close and exit.
 */
export type ServerCommand = { type: 'expect'; n: number } | { type: 'count' } | { type: 'cpu' } | { type: 'close' };

/**
 * From the server process: listening; counting from zero; the count so far and when the last
 * event was seen (`at`: ms since the epoch, high resolution, the clock both processes share);
 * the expected count reached.
 */
export type ServerReport =
  | { type: 'ready' }
  | { type: 'expecting' }
  | { type: 'count'; count: number; at: number }
  | { type: 'reached'; at: number }
  /** User + system CPU time of the process so far, µs. */
  | { type: 'cpu'; us: number };

/** Now, as ms since the epoch with sub-ms resolution: comparable between processes of one machine. */
export const epochNow = (): number => performance.timeOrigin + performance.now();
