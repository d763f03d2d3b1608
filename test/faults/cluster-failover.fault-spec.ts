import { RedisAckQueueService, type RedisAckQueueOptions } from '../../lib';
import { followedConsumers } from '../support/fault-consumers';
import { FaultLedger, NOTHING_LEFT, leftovers, printSummary, produce, storedIds } from '../support/fault-ledger';
import { eventually, uniqueTopic } from '../support/queue-fixture';
import { RedisCluster } from '../support/redis-cluster';
import type { RedisServer } from '../support/redis-server';

describe('fault: Redis Cluster failover (a master SIGKILLed, its replica promoted)', () => {
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
    for (const tally of spared) expect({ lost: tally.lost, handled: tally.handled }).toEqual({ lost: 0, handled: total });
    expect(hit.handled + hit.lostToFailover.pushes).toBe(total);
  }, 120_000);

  it('measures what asynchronous replication loses: pushes the replica never received are gone after promotion', async () => {
    // A master that still has its replica (the previous test left one without).
    let master: RedisServer | undefined;
    let replica: RedisServer | undefined;
    for (const candidate of await cluster.masters()) {
      replica = await cluster.replicaOf(candidate).catch(() => undefined);
      if (replica) {
        master = candidate;
        break;
      }
    }
    if (!master || !replica) throw new Error('no master with a live replica left');
    const topic = await topicOn(master);
    const queue = await fx.service();
    const before = (await queue.pushMany(topic, [...Array(10)].map((_, i) => ({ id: `kept-${i}`, payload: i })))).map((r) => r.id);
    const direct = master.client();
    // WAIT: the replica has acknowledged those ten.
    expect(await direct.call('WAIT', '1', '5000')).toBe(1);

    replica.pause();
    // A stopped replica still receives the stream into its socket buffer and applies it after
    // SIGCONT (observed: nothing lost). Cutting the link makes the master alone hold what follows.
    await direct.call('CLIENT', 'KILL', 'TYPE', 'replica');
    direct.disconnect();
    const n = 200;
    const resolved: string[] = [];
    for (let i = 0; i < n; i += 20) {
      const items = [...Array(20)].map((_, j) => ({ id: `unreplicated-${i + j}`, payload: i + j }));
      resolved.push(...(await queue.pushMany(topic, items)).filter((r) => !r.duplicate).map((r) => r.id));
    }
    expect(resolved).toHaveLength(n);

    const killedAt = Date.now();
    await master.kill();
    replica.resume();
    const promoted = await cluster.waitForPromotion(master);
    const clusterOkMs = Date.now() - killedAt;
    expect(promoted).toBe(replica);
    await eventually(async () => (await queue.push(topic, 'after', { id: 'after' }).catch(() => null)) !== null, 30_000, 50);
    const writableMs = Date.now() - killedAt;

    const stored = new Set(await promoted.client().hkeys(`{ackq:${topic}}:messages`));
    const lost = resolved.filter((id) => !stored.has(id));
    process.stdout.write(
      `fault cluster-replication-loss: ${n} pushes resolved while the replica was cut off, ${lost.length} lost after ` +
        `promotion; ${before.filter((id) => stored.has(id)).length}/${before.length} replicated ones kept; cluster ok ` +
        `after ${clusterOkMs} ms, writable after ${writableMs} ms\n`,
    );
    expect(before.every((id) => stored.has(id))).toBe(true);
    expect(stored.has('after')).toBe(true);
    expect(lost).toHaveLength(n);
  }, 60_000);
});
