import type { Redis } from 'ioredis';
import { eventually, type TestClient } from './queue-fixture';

/**
 * Lets `ms` pass on purpose, for a negative check: something must NOT happen meanwhile (no
 * redelivery, no consumer, no churn). Only for that: a state or an event that can be awaited
 * is awaited instead. `what` names what must not happen, for the reader.
 */
export async function quietFor(ms: number, what: string): Promise<void> {
  void what;
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** CLIENT LIST of these servers, one field map per connection. */
async function connections(servers: Redis[]): Promise<Record<string, string>[]> {
  const lists = await Promise.all(servers.map((server) => server.client('LIST')));
  return lists
    .flatMap((list) => String(list).split('\n'))
    .filter(Boolean)
    .map((line) =>
      Object.fromEntries(
        line.split(' ').map((field) => [field.slice(0, field.indexOf('=')), field.slice(field.indexOf('=') + 1)]),
      ),
    );
}

/**
 * Resolves once a consumer of `topic` is blocked in its wait on one of `servers` (a
 * connection named after the topic with the `b` flag in CLIENT LIST): the consumer is idle.
 */
export async function untilConsumerBlocked(servers: Redis[], topic: string, timeoutMs = 10_000): Promise<void> {
  const blocked = async () =>
    (await connections(servers)).some((c) => c.name?.endsWith(`:${topic}`) && c.flags?.includes('b'));
  await eventually(blocked, timeoutMs).catch(() => {
    throw new Error(
      `no consumer of "${topic}" was blocked in its wait within ${timeoutMs} ms (CLIENT LIST: no connection named *:${topic} with flag b)`,
    );
  });
}

/**
 * The bound of an "at once" check whose point is that something did not wait out a timer of
 * `ruledOutMs` (an idle wait, a heartbeat, a drain): half of it. It follows from what the test
 * tells apart, not from the machine's speed, so a loaded machine does not fail it.
 */
export function wellBefore(ruledOutMs: number): number {
  return ruledOutMs / 2;
}

/**
 * Runs `attempt(delayMs)`, a case whose first steps must all happen before a delay of `delayMs`
 * ends; `attempt` measures them and answers false when they did not (a loaded machine), and runs
 * again with twice the delay. The bound follows from measured time, not from the machine's speed.
 */
export async function withDelayOutlasting(
  firstMs: number,
  attempt: (delayMs: number) => Promise<boolean>,
  tries = 6,
): Promise<void> {
  for (let delayMs = firstMs, n = 0; n < tries; delayMs *= 2, n++) {
    if (await attempt(delayMs)) return;
  }
  throw new Error(`the first steps outlasted every delay up to ${firstMs * 2 ** (tries - 1)} ms`);
}

/**
 * Watches for stalls of this process or of Redis while a test runs: one TIME round trip every
 * 25 ms, noting each wait between two answers longer than `overMs`. A scheduler that must keep a
 * pace cannot keep it through such a stall (its documented bound is a blocked event loop or
 * Redis), so a test that checks the pace can tell a stall of the machine from a defect.
 */
export function watchStalls(redis: TestClient, overMs = 500): { stop(): Promise<number[]> } {
  const stalls: number[] = [];
  let stopped = false;
  const watching = (async () => {
    let last = Date.now();
    while (!stopped) {
      await redis.time();
      await new Promise((resolve) => setTimeout(resolve, 25));
      const now = Date.now();
      if (now - last > overMs) stalls.push(now - last);
      last = now;
    }
  })();
  return {
    async stop() {
      stopped = true;
      await watching;
      return stalls;
    },
  };
}
