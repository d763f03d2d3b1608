import type { RedisClient } from '../../lib/engine/redis/connection';
import { BlockingWakeSignal } from '../../lib/engine/redis/wake-signal';

/** A blocking connection whose BLPOPs the test answers by hand, as Redis would. */
class FakeBlockingClient {
  readonly pops: { answer: (reply: [string, string] | null) => void }[] = [];

  blpop(): Promise<[string, string] | null> {
    return new Promise((resolve) => this.pops.push({ answer: resolve }));
  }

  disconnect(): void {}
}

/** 'woke' if the wait ends within the current turn of the event loop (a token was there), else 'blocked'. */
async function outcome(wait: Promise<void>): Promise<'woke' | 'blocked'> {
  return Promise.race([
    wait.then(() => 'woke' as const),
    new Promise<'blocked'>((resolve) => setImmediate(() => resolve('blocked'))),
  ]);
}

describe('BlockingWakeSignal', () => {
  const stop = new AbortController();
  afterAll(() => stop.abort());

  function signal() {
    const client = new FakeBlockingClient();
    return { client, wake: new BlockingWakeSignal(client as unknown as RedisClient, 'wake') };
  }

  it('keeps a wake-up that its outstanding pop took between two waits, for the next wait', async () => {
    const { client, wake } = signal();
    // Something is due soon: the wait ends on its timer, the pop stays outstanding.
    await wake.wait(0, stop.signal);
    expect(client.pops).toHaveLength(1);
    // The consumer reserves (nothing ready); a push lands now and the outstanding pop takes its token.
    client.pops[0].answer(['wake', '1']);
    await new Promise((resolve) => setImmediate(resolve));
    // The next wait must not block: the push is waiting for a reserve.
    const next = wake.wait(5_000, stop.signal);
    expect(await outcome(next)).toBe('woke');
    expect(client.pops).toHaveLength(1);
  });

  it('blocks the wait after one whose own pop took the token', async () => {
    const { client, wake } = signal();
    const first = wake.wait(5_000, stop.signal);
    client.pops[0].answer(['wake', '1']);
    await first;
    // That token woke the first wait (whose caller then reserved): the next one blocks on a new pop.
    const next = wake.wait(5_000, stop.signal);
    expect(await outcome(next)).toBe('blocked');
    expect(client.pops).toHaveLength(2);
    client.pops[1].answer(['wake', '1']);
    await next;
  });

  it('does not count a pop that timed out (no token) as a wake-up', async () => {
    const { client, wake } = signal();
    await wake.wait(0, stop.signal);
    client.pops[0].answer(null);
    await new Promise((resolve) => setImmediate(resolve));
    const next = wake.wait(5_000, stop.signal);
    expect(await outcome(next)).toBe('blocked');
    expect(client.pops).toHaveLength(2);
    client.pops[1].answer(['wake', '1']);
    await next;
  });
});
