import { RedisAckQueueService, type RedisAckQueueOptions } from '../../lib';
import { expectLogs } from '../support/capture-logs';
import { followedConsumers } from '../support/fault-consumers';
import { FaultLedger, NOTHING_LEFT, leftovers, printSummary, produce, storedIds } from '../support/fault-ledger';
import { eventually, uniqueTopic } from '../support/queue-fixture';
import { RedisCluster } from '../../support/redis-processes/redis-cluster';
import type { RedisServer } from '../../support/redis-processes/redis-server';

describe('fault: Redis Cluster failover (a master SIGKILLed, its replica promoted)', () => {
  // What the failover causes, and the ledger explains: consumers pausing until the replica is
  // promoted, lost connections, leases on the killed master that ran out meanwhile.
  expectLogs(
    /^Consumer of ".*" paused/,
    /^Lost the connection to Redis/,
    /^Lost the lease of message/,
    /^Scheduler paused/,
  );
  let cluster: RedisCluster;
  const services: RedisAckQueueService[] = [];
  const fx = {
    async service(options: RedisAckQueueOptions = {}): Promise<RedisAckQueueService> {
      const service = new RedisAckQueueService({ connection: { cluster: cluster.seeds }, ...options });
      services.push(service);
      await service.connect();
      return service;
    },
  };

  beforeAll(async () => {
    // A 1.5 s node timeout fails a dead master over in a few seconds. Validity factor 0: a
    // replica that was paused may still be promoted (its data age does not disqualify it).
    cluster = await RedisCluster.start({ nodeTimeoutMs: 1_500, config: ['cluster-replica-validity-factor', '0'] });
  });

  afterAll(async () => {
    await Promise.all(services.map((service) => service.close(0)));
    await cluster?.stop();
  });

  /** A new topic whose slot is on `master`. */
  async function topicOn(master: RedisServer): Promise<string> {
    for (;;) {
      const topic = uniqueTopic('failover');
      if ((await cluster.nodeForKey(`{ackq:${topic}}`)) === master) return topic;
    }
  }

  it('keeps producing and consuming through the failover; every push after it is handled, losses before it are reported', async () => {
    const masters = await cluster.masters();
    const topics = await Promise.all(masters.map(topicOn));
    const victim = masters[0];
    const victimReplica = await cluster.replicaOf(victim);
    const ledgers = topics.map(() => new FaultLedger());
    const producer = await fx.service();
    const consumers = [];
    for (const [i, topic] of topics.entries()) {
      consumers.push(...(await followedConsumers(fx, topic, ledgers[i], { options: { leaseMs: 1_000 } })).consumers);
    }
    const total = 2_000;
    const producing = topics.map((topic, i) =>
      produce(producer, topic, ledgers[i], { total, batch: 15, everyMs: 60, idPrefix: `f${i}` }),
    );

    // SIGKILL the first topic's master once its topic is busy: pushed, leased and acked.
    await eventually(() => ledgers[0].pushed.size >= 300, 30_000);
    const pushedBeforeKill = ledgers[0].pushed.size;
    const killedAt = Date.now();
    await victim.kill();
    ledgers[0].failedOver(killedAt);
    const promoted = await cluster.waitForPromotion(victim);
    const clusterOkMs = Date.now() - killedAt;
    // The client's view: the victim topic answers again.
    await eventually(async () => (await producer.stats(topics[0]).catch(() => null)) !== null, 30_000, 50);
    const topicServedMs = Date.now() - killedAt;

    await Promise.all(producing);
    for (const topic of topics) await producer.waitUntilIdle(topic, { timeoutMs: 60_000 });
    await Promise.all(consumers.map((consumer) => consumer.close()));

    const redis = cluster.client();
    const tallies = [];
    for (const [i, topic] of topics.entries()) {
      const tally = ledgers[i].tally({ leftInRedis: await storedIds(redis, topic) });
      tallies.push(tally);
      expect({ topic, violations: tally.violations }).toEqual({ topic, violations: [] });
      expect(tally.pushed).toBe(total);
      expect(await leftovers(redis, topic)).toEqual(NOTHING_LEFT);
    }
    const [hit, ...spared] = tallies;
    printSummary('cluster-failover', hit, { clusterOkMs, topicServedMs, ...ledgers[0].counters() });
    process.stdout.write(
      `fault cluster-failover: master SIGKILLed; cluster ok again after ${clusterOkMs} ms, the topic served again after ` +
        `${topicServedMs} ms; lost to async replication: ${hit.lostToFailover.pushes} resolved pushes, ` +
        `${hit.lostToFailover.acks} acks (redelivered); other masters' topics: ` +
        `${spared.map((t) => `handled=${t.handled} duplicates=${t.duplicates} lost=${t.lost}`).join('; ')}\n`,
    );
    expect(promoted).toBe(victimReplica);
    // Most of the victim topic's messages were pushed after the kill, by the same producer.
    expect(pushedBeforeKill).toBeLessThan(total / 2);
    // Topics whose master lived lose nothing; the victim topic only what resolved before the kill.
    for (const tally of spared)
      expect({ lost: tally.lost, handled: tally.handled }).toEqual({ lost: 0, handled: total });
    expect(hit.handled + hit.lostToFailover.pushes).toBe(total);
  }, 120_000);

  /** A master that still has a live replica (each test kills one master for good). */
  async function masterWithReplica(): Promise<{ master: RedisServer; replica: RedisServer }> {
    for (const master of await cluster.masters()) {
      const replica = await cluster.replicaOf(master).catch(() => undefined);
      if (replica) return { master, replica };
    }
    throw new Error('no master with a live replica left');
  }

  /**
   * Freezes the replica and cuts its link: a stopped replica still receives the stream into its
   * socket buffer and applies it after SIGCONT (observed: nothing lost), so the master must drop it.
   */
  async function cutOff(master: RedisServer, replica: RedisServer): Promise<void> {
    const direct = master.client();
    // WAIT: the replica has everything so far.
    expect(await direct.call('WAIT', '1', '5000')).toBe(1);
    replica.pause();
    await direct.call('CLIENT', 'KILL', 'TYPE', 'replica');
    direct.disconnect();
  }

  /** Kills the master, thaws the replica and waits for its promotion; returns the promoted node's ids of `topic`. */
  async function failOver(master: RedisServer, replica: RedisServer, topic: string) {
    const killedAt = Date.now();
    await master.kill();
    replica.resume();
    const promoted = await cluster.waitForPromotion(master);
    expect(promoted).toBe(replica);
    return {
      stored: new Set(await promoted.client().hkeys(`{ackq:${topic}}:messages`)),
      clusterOkMs: Date.now() - killedAt,
      killedAt,
    };
  }

  /** Pushes 200 messages in batches of 20; returns the ids that resolved and the errors. */
  async function push200(queue: RedisAckQueueService, topic: string) {
    const resolved: string[] = [];
    const errors: unknown[] = [];
    for (let i = 0; i < 200; i += 20) {
      const items = Array.from({ length: 20 }, (_, j) => ({ id: `unreplicated-${i + j}`, payload: i + j }));
      await queue.pushMany(topic, items).then(
        (results) => resolved.push(...results.filter((r) => !r.duplicate).map((r) => r.id)),
        (error: unknown) => errors.push(error),
      );
    }
    return { resolved, errors };
  }

  it('measures what asynchronous replication loses: pushes the replica never received are gone after promotion', async () => {
    const { master, replica } = await masterWithReplica();
    const topic = await topicOn(master);
    const queue = await fx.service();
    const before = (
      await queue.pushMany(
        topic,
        Array.from({ length: 10 }, (_, i) => ({ id: `kept-${i}`, payload: i })),
      )
    ).map((r) => r.id);
    await cutOff(master, replica);
    const { resolved } = await push200(queue, topic);
    expect(resolved).toHaveLength(200);

    const { stored, clusterOkMs, killedAt } = await failOver(master, replica, topic);
    await eventually(
      async () => (await queue.push(topic, 'after', { id: 'after' }).catch(() => null)) !== null,
      30_000,
      50,
    );
    const writableMs = Date.now() - killedAt;
    const lost = resolved.filter((id) => !stored.has(id));
    process.stdout.write(
      `fault cluster-replication-loss: ${resolved.length} pushes resolved while the replica was cut off, ${lost.length} lost after ` +
        `promotion; ${before.filter((id) => stored.has(id)).length}/${before.length} replicated ones kept; cluster ok ` +
        `after ${clusterOkMs} ms, writable after ${writableMs} ms\n`,
    );
    expect(before.every((id) => stored.has(id))).toBe(true);
    expect(lost).toHaveLength(200);
  }, 60_000);

  it('with replicatedPushes, no push that resolved is lost by the failover: the unreplicated ones rejected instead', async () => {
    const { master, replica } = await masterWithReplica();
    const topic = await topicOn(master);
    // The healthy replica must confirm: its timeout leaves a loaded machine room. The cut-off one
    // never confirms, so a short timeout there tells the same.
    const healthy = await fx.service({ replicatedPushes: { replicas: 1, timeoutMs: 10_000 } });
    const queue = await fx.service({ replicatedPushes: { replicas: 1, timeoutMs: 300 } });
    const before = (
      await healthy.pushMany(
        topic,
        Array.from({ length: 10 }, (_, i) => ({ id: `kept-${i}`, payload: i })),
      )
    ).map((r) => r.id);
    await cutOff(master, replica);
    const { resolved, errors } = await push200(queue, topic);
    expect(resolved).toEqual([]);
    expect(errors).toHaveLength(10);
    expect(errors.every((e) => (e as { code?: string }).code === 'REPLICATION_TIMEOUT')).toBe(true);

    const { stored } = await failOver(master, replica, topic);
    const lost = [...before, ...resolved].filter((id) => !stored.has(id));
    process.stdout.write(
      `fault cluster-replicated-pushes: ${before.length} pushes resolved, ${lost.length} lost after promotion; ` +
        `${errors.length} batches rejected while the replica was cut off\n`,
    );
    expect(lost).toEqual([]);
  }, 60_000);
});
