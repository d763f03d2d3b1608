import { createServer, connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { RedisUnavailableError } from '../../lib';
import { withinBound } from '../../lib/engine/redis/call-bound';

const after = <T>(ms: number, value: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), ms));
const failAfter = (ms: number, error: Error): Promise<never> =>
  new Promise((_, reject) => setTimeout(() => reject(error), ms));

describe('withinBound: the wait of one public call for Redis', () => {
  it('answers what the work answers, when it answers in time', async () => {
    await expect(withinBound(after(5, 42), 1_000, 'push', 'orders')).resolves.toBe(42);
    const failure = new Error('refused');
    await expect(withinBound(failAfter(5, failure), 1_000, 'push', 'orders')).rejects.toBe(failure);
  });

  it('rejects with RedisUnavailableError naming the operation once the bound passes, saying the call may still run', async () => {
    const started = Date.now();
    const error: unknown = await withinBound(new Promise(() => undefined), 50, 'read stats', 'orders').catch(
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ code: 'REDIS_UNAVAILABLE', operation: 'read stats', topic: 'orders' });
    expect((error as Error).message).toBe(
      'Cannot read stats on topic "orders": Redis is unavailable (no answer within 50 ms, the commandTimeoutMs; the call was ' +
        'not withdrawn and may still take effect when Redis returns); retry once Redis answers',
    );
  });

  it('names the option that set the bound, and gives the dedup advice for pushes only', async () => {
    const never = () => new Promise(() => undefined);
    const ping = (await withinBound(never(), 5, 'ping', undefined, 'the timeout given to ping').catch(
      (e: unknown) => e,
    )) as Error;
    expect(ping.message).toContain('no answer within 5 ms, the timeout given to ping;');
    expect(ping.message).not.toMatch(/commandTimeoutMs|push/);
    const push = (await withinBound(never(), 5, 'push', 'orders').catch((e: unknown) => e)) as Error;
    expect(push.message).toMatch(
      /the commandTimeoutMs; .*retry once Redis answers \(a push retried with the same id is deduplicated while its first copy is stored or kept by keepCompleted\)$/,
    );
    const flow = (await withinBound(never(), 5, 'push a flow', 'orders').catch((e: unknown) => e)) as Error;
    expect(flow.message).toMatch(/kept by keepCompleted\)$/);
  });

  it('leaves no unhandled rejection when the work fails after the bound', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      await expect(withinBound(failAfter(30, new Error('late')), 5, 'push')).rejects.toBeInstanceOf(
        RedisUnavailableError,
      );
      await after(60, undefined);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('takes an answer that reached the socket while the process was busy past the bound as an answer', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect((server.address() as { port: number }).port, '127.0.0.1');
    const [[peer]] = await Promise.all([accepted, once(client, 'connect')]);
    try {
      const answer = new Promise<string>((resolve) => client.once('data', (data) => resolve(String(data))));
      peer.write('OK');
      const bounded = withinBound(answer, 20, 'push', 'orders');
      // Busy past the bound: the answer waits in the socket, and Node's next turn runs the
      // expired timer before it reads it.
      for (const until = Date.now() + 200; Date.now() < until;);
      await expect(bounded).resolves.toBe('OK');
    } finally {
      client.destroy();
      peer.destroy();
      server.close();
    }
  });

  it('takes a bound beyond the longest Node timer as that timer, not as an immediate timeout', async () => {
    await expect(withinBound(after(20, 'done'), 2 ** 40, 'push')).resolves.toBe('done');
  });
});
