import { ReplicationTimeoutError, RedisAckQueueService, type RedisAckQueueOptions } from '../../lib';
import { eventually, uniqueTopic } from '../support/queue-fixture';
import { RedisServer } from '../../support/redis-processes/redis-server';

/**
 * Redis replicates asynchronously: a push the master confirmed can be missing on the replica
 * that a failover promotes. With `replicatedPushes` a push resolves only once a replica has it.
 * The replica is frozen (SIGSTOP) and cut off so that it lags for certain, the master is killed, and the
 * replica is promoted by hand (REPLICAOF NO ONE), as Sentinel or Cluster would.
 */
describe('fault: failover to a lagging replica', () => {
  let master: RedisServer;
  let replica: RedisServer;
  const services: RedisAckQueueService[] = [];

  beforeEach(async () => {
    master = await RedisServer.start({ config: ['repl-diskless-sync-delay', '0'] });
    replica = await RedisServer.start();
    await replica.client().call('REPLICAOF', '127.0.0.1', String(master.port));
    // Online as the master sees it: it answers the master's acks, so WAIT can count it.
    const probe = master.client();
    await eventually(async () => (await probe.set('probe', 1)) && (await probe.wait(1, 200)) === 1);
    await probe.del('probe');
  });

  afterEach(async () => {
    await Promise.all(services.splice(0).map((service) => service.close(0)));
    process.kill(replica.pid!, 'SIGCONT');
    await Promise.all([master.stop(), replica.stop()]);
  });

  async function service(options: RedisAckQueueOptions = {}): Promise<RedisAckQueueService> {
    const queue = new RedisAckQueueService({ connection: master.url, ...options });
    services.push(queue);
    await queue.connect();
    return queue;
  }

  /** Pushes `count` messages one call at a time; returns the ids whose push resolved. */
  async function pushAll(queue: RedisAckQueueService, topic: string, count: number, prefix: string) {
    const resolved: string[] = [];
    const failures: unknown[] = [];
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        queue.push(topic, { n: i }, { id: `${prefix}-${i}` }).then(
          ({ id }) => void resolved.push(id),
          (error: unknown) => void failures.push(error),
        ),
      ),
    );
    return { resolved, failures };
  }

  /**
   * The replica stops taking the stream: frozen, and cut off by the master (else the kernel
   * would buffer the stream for it and it would catch up after all once thawed).
   */
  async function freezeReplica(): Promise<void> {
    process.kill(replica.pid!, 'SIGSTOP');
    await master.client().call('CLIENT', 'KILL', 'TYPE', 'replica');
  }

  /** Kills the master and promotes the replica; returns the ids of `topic` the replica kept. */
  async function failOver(topic: string): Promise<Set<string>> {
    await master.kill();
    process.kill(replica.pid!, 'SIGCONT');
    const promoted = replica.client();
    await promoted.call('REPLICAOF', 'NO', 'ONE');
    return new Set(await promoted.hkeys(`{ackq:${topic}}:messages`));
  }

  it('without replicatedPushes: pushes that resolved while the replica lagged are lost by the failover (measured)', async () => {
    const topic = uniqueTopic('async');
    const queue = await service();
    const before = await pushAll(queue, topic, 50, 'before');
    await eventually(async () => (await replica.client().hlen(`{ackq:${topic}}:messages`)) === 50);
    await freezeReplica();
    const during = await pushAll(queue, topic, 200, 'during');
    expect(during.resolved).toHaveLength(200);
    const kept = await failOver(topic);
    const lost = [...before.resolved, ...during.resolved].filter((id) => !kept.has(id));
    console.log(
      `[replication] async pushes: ${before.resolved.length + during.resolved.length} resolved, ${lost.length} lost by failover to a lagging replica`,
    );
    expect(lost.sort()).toEqual([...during.resolved].sort());
  });

  it('with replicatedPushes: no push that resolved is lost; the ones a lagging replica did not confirm reject', async () => {
    const topic = uniqueTopic('replicated');
    // A healthy replica must confirm every push: its timeout leaves a loaded machine room. The
    // frozen one never confirms, so a short timeout there tells the same.
    const healthy = await service({ replicatedPushes: { replicas: 1, timeoutMs: 10_000 } });
    const before = await pushAll(healthy, topic, 50, 'before');
    expect(before.failures).toEqual([]);
    expect(before.resolved).toHaveLength(50);
    await freezeReplica();
    const queue = await service({ replicatedPushes: { replicas: 1, timeoutMs: 300 } });
    const during = await pushAll(queue, topic, 200, 'during');
    expect(during.resolved).toHaveLength(0);
    expect(during.failures).toHaveLength(200);
    expect(during.failures[0]).toBeInstanceOf(ReplicationTimeoutError);
    expect(during.failures[0]).toMatchObject({ topic, confirmed: 0, wanted: 1, code: 'REPLICATION_TIMEOUT' });
    expect((during.failures[0] as ReplicationTimeoutError).ids).toHaveLength(1);
    const kept = await failOver(topic);
    const lost = before.resolved.filter((id) => !kept.has(id));
    console.log(
      `[replication] replicated pushes: ${before.resolved.length} resolved, ${lost.length} lost, ${during.failures.length} rejected while the replica lagged`,
    );
    expect(lost).toEqual([]);
  });

  it('with replicatedPushes: a timed-out push is stored on the master, and its retry with the same id is a duplicate', async () => {
    const topic = uniqueTopic('retry');
    const queue = await service({ replicatedPushes: { replicas: 1, timeoutMs: 200 } });
    await freezeReplica();
    const failure = await queue
      .pushMany(topic, [
        { id: 'a', payload: 1 },
        { id: 'b', payload: 2 },
      ])
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'REPLICATION_TIMEOUT', ids: ['a', 'b'] });
    process.kill(replica.pid!, 'SIGCONT');
    expect(
      await queue.pushMany(topic, [
        { id: 'a', payload: 1 },
        { id: 'b', payload: 2 },
      ]),
    ).toEqual([
      { id: 'a', duplicate: true },
      { id: 'b', duplicate: true },
    ]);
    expect(await queue.stats(topic)).toMatchObject({ ready: 2 });
  });

  it('rejects a bad replicatedPushes option with a typed error', () => {
    for (const replicatedPushes of [{ replicas: 0 }, { replicas: 1, timeoutMs: -1 }, 'yes', { replicas: 1.5 }]) {
      expect(
        () => new RedisAckQueueService({ connection: master.url, replicatedPushes: replicatedPushes as never }),
      ).toThrow(
        // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- Jest's toThrow takes an asymmetric matcher, which @types/jest types as any and leaves out of toThrow's parameter
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    }
  });
});
