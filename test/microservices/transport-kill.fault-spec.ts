import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { RedisAckQueueClient, RedisAckQueueRecord } from '../../lib/microservices';
import { ConsumerProcesses } from '../support/consumer-processes';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { ReplyDroppingProxy } from '../support/reply-dropping-proxy';

/**
 * The Nest transport with its servers in processes of their own (test/support/
 * microservice-process.js, the built library) and the client in the test: servers SIGKILLed
 * while they handle, restarted, several at once, and one killed after storing a reply but
 * before its ack.
 */
describe('fault: the microservice transport under killed servers', () => {
  const fx = useRedis();
  const holdDir = mkdtempSync(join(tmpdir(), 'ackq-transport-'));
  afterAll(() => rmSync(holdDir, { recursive: true, force: true }));

  /** Servers and a client of one prefix (so that no test sees another's messages). */
  function setup(o: { leaseMs?: number; connection?: string } = {}) {
    const prefix = uniqueTopic('transport');
    const servers = new ConsumerProcesses(
      { ...fx.consumerEnv, PREFIX: prefix, LEASE_MS: String(o.leaseMs ?? 1000), CONCURRENCY: '4' },
      'microservice-process.js',
    );
    const client = new RedisAckQueueClient({ connection: fx.connection, prefix, timeoutMs: 60_000 });
    fx.closers.push(
      () => servers.stopAll(),
      () => client.close(),
    );
    return { prefix, servers, client };
  }

  const emitted = async (client: RedisAckQueueClient, data: object) =>
    lastValueFrom(client.emit<{ id: string }>('ms.event', data));

  it('loses no event across a server SIGKILL and restart: the killed one is handled after the restart', async () => {
    const { servers, client } = setup();
    const release = join(holdDir, `restart-${Date.now()}`);
    const first = await servers.start();
    const held = await emitted(client, { n: 1, holdUntilFile: release });
    await servers.waitFor((e) => e.type === 'start' && e.id === held.id);
    await servers.kill(first, 'SIGKILL');
    // Pushed while no server runs: kept until one consumes.
    const later = await Promise.all([2, 3, 4].map((n) => emitted(client, { n })));
    writeFileSync(release, '');
    const second = await servers.start();
    for (const { id } of later) await servers.waitFor((e) => e.type === 'done' && e.id === id && e.pid === second.pid);
    // The killed one comes back once its lease runs out (1 s), as its next attempt.
    const redone = await servers.waitFor((e) => e.type === 'done' && e.id === held.id, 30_000);
    expect(redone).toMatchObject({ pid: second.pid, attempt: 2 });
    expect(servers.of('done', first.pid)).toEqual([]);
  });

  it("hands a killed server's in-flight event to another server instance", async () => {
    const { servers, client } = setup();
    const release = join(holdDir, `release-${Date.now()}`);
    await Promise.all([servers.start(), servers.start()]);
    const { id } = await emitted(client, { n: 7, holdUntilFile: release });
    const started = await servers.waitFor((e) => e.type === 'start' && e.id === id);
    const victim = servers.alive().find((child) => child.pid === started.pid)!;
    await servers.kill(victim, 'SIGKILL');
    writeFileSync(release, '');
    const done = await servers.waitFor((e) => e.type === 'done' && e.id === id);
    expect(done.pid).not.toBe(started.pid);
    expect(done.attempt).toBe(2);
  });

  it('spreads events over the instances, each handled once', async () => {
    const { servers, client, prefix } = setup();
    await Promise.all([servers.start(), servers.start(), servers.start()]);
    const ids = new Set<string>();
    for (let n = 0; n < 300; n++) ids.add((await emitted(client, { n, handlerMs: 10 })).id);
    const queue = await fx.service({ prefix });
    await queue.waitUntilIdle('ms.event', { timeoutMs: 60_000 });
    // Redis is idle once the last ack ran; its server reports the event done through a pipe,
    // which the test may read a moment later.
    const reported = new Set<string>();
    await servers.waitFor(
      (e) => {
        if (e.type === 'done') reported.add(e.id!);
        return reported.size >= ids.size;
      },
      30_000,
      '300 events reported done',
    );
    const done = servers.of('done');
    expect(done).toHaveLength(300);
    expect(new Set(done.map((e) => e.id))).toEqual(ids);
    expect(new Set(done.map((e) => e.pid)).size).toBeGreaterThan(1);
  });

  it('answers requests from a server in another process', async () => {
    const { servers, client } = setup();
    await servers.start();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, n) => firstValueFrom(client.send<string>('ms.request', { n }))),
    );
    expect(replies).toEqual(Array.from({ length: 20 }, (_, n) => `reply:${n}`));
  });

  it('gives exactly one reply to a request delivered again after its server died between the reply and the ack', async () => {
    const proxy = await ReplyDroppingProxy.start(fx.server.port);
    try {
      const { servers, client, prefix } = setup({ leaseMs: 1000 });
      // Announcements on the caller's channels: the request's id, or (to a caller that asks for it,
      // as this client does) the reply itself followed by a newline and the id.
      const notices: string[] = [];
      const listener = fx.client() as Redis;
      await listener.psubscribe(`${prefix}:reply-to:*`);
      listener.on('pmessage', (_pattern, _channel, text: string) =>
        notices.push(text.slice(text.lastIndexOf('\n') + 1)),
      );

      const doomed = await servers.start({ REDIS_URL: proxy.url });
      const marker = `marker-${Date.now()}`;
      // The server's reply script runs in Redis, its answer is lost and the server can never
      // reach Redis again: it dies before its ack, as if killed right after the reply.
      proxy.dropReplyTo(marker, { thenCutOff: true });
      const id = `request-${Date.now()}`;
      const reply = lastValueFrom(
        client.send<string>('ms.request', new RedisAckQueueRecord({ n: 1, reply: marker }, { id })).pipe(toArray()),
      );
      expect(await reply).toEqual([marker]);
      expect(proxy.dropped).toBe(1);
      await servers.kill(doomed, 'SIGKILL');

      // Another server takes the request once the lease runs out, finds it answered, and acks it
      // without running the handler again.
      await servers.start();
      const queue = await fx.service({ prefix });
      await queue.waitUntilIdle('ms.request', { timeoutMs: 30_000 });
      expect(servers.of('start').filter((e) => e.id === id)).toHaveLength(1);
      expect(notices.filter((each) => each === id)).toHaveLength(1);
      expect(await queue.get('ms.request', id)).toBeNull();
      await listener.punsubscribe();
    } finally {
      await proxy.close();
    }
  });
});
