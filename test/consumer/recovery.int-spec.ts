import { expectLogs } from '../support/capture-logs';
import { ConsumerProcesses } from '../support/consumer-processes';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

describe('consumers recover from faults', () => {
  const fx = useRedis();

  it('delivers the messages of a consumer killed with SIGKILL mid-handler to the survivor after the lease', async () => {
    const topic = uniqueTopic();
    const processes = new ConsumerProcesses({
      ...fx.consumerEnv,
      TOPIC: topic,
      LEASE_MS: '1000',
      HANDLER_MS: '300',
      CONCURRENCY: '4',
    });
    try {
      const victim = await processes.start();
      const queue = await fx.service();
      const ids = (
        await queue.pushMany(
          topic,
          Array.from({ length: 12 }, (_, i) => ({ payload: i })),
        )
      ).map((r) => r.id);
      await eventually(() => processes.of('start', victim.pid).length >= 4);
      await processes.kill(victim);
      const interrupted = processes
        .of('start', victim.pid)
        .map((e) => e.id!)
        .filter((id) => !processes.of('done', victim.pid).some((d) => d.id === id));
      expect(interrupted.length).toBeGreaterThan(0);
      const survivor = await processes.start();
      await queue.waitUntilIdle(topic, { timeoutMs: 30_000 });
      // Redis is idle as soon as the last ack ran; the survivor reports it a moment later.
      const allAcked = () => ids.every((id) => processes.of('acked').some((e) => e.id === id));
      await eventually(allAcked, 5_000).catch(() => undefined);
      const acked = processes.of('acked').map((e) => e.id);
      expect(new Set(acked)).toEqual(new Set(ids));
      for (const id of interrupted) {
        expect(processes.of('start', survivor.pid).find((e) => e.id === id)).toMatchObject({ attempt: 2 });
      }
      expect(await queue.stats(topic)).toEqual({ ready: 0, delayed: 0, leased: 0, dead: 0, paused: false });
    } finally {
      await processes.stopAll();
    }
  });

  /**
   * A consumer takes 'before', then `fault` strikes, then 'after' (pushed by `pushAfter`) is
   * taken too: no restart of the app, nothing seen twice.
   */
  async function resumesAcross(
    fault: (topic: string) => Promise<unknown>,
    pushAfter: (push: () => Promise<unknown>) => Promise<unknown>,
    takenWithinMs: number,
  ): Promise<void> {
    const queue = await fx.service();
    const topic = uniqueTopic();
    const seen: unknown[] = [];
    const consumer = queue.consume(topic, (payload) => void seen.push(payload));
    await queue.push(topic, 'before');
    await eventually(() => seen.length === 1);
    await fault(topic);
    await pushAfter(() => queue.push(topic, 'after'));
    await eventually(() => seen.length === 2, takenWithinMs);
    expect(seen).toEqual(['before', 'after']);
    await consumer.close();
  }

  it('resumes after CLIENT KILL of every connection', async () => {
    await resumesAcross(
      () => Promise.all(fx.nodes().map((node) => node.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'))),
      (push) => push(),
      5_000,
    );
  });

  it("resumes after a Redis restart (on a cluster: of the topic's master), without restarting the app", async () => {
    // The outage is reported while it lasts: the consumer pauses, connections are lost; the
    // server comes back empty (no persistence), which is reported too.
    expectLogs(/^Consumer of ".*" paused/, /^Lost the connection to Redis/, /came back without the data/);
    await resumesAcross(
      (topic) => fx.restartServing(`{ackq:${topic}}`),
      // Pushes fail while the server is down; the app retries, as a producer would.
      (push) => eventually(async () => (await push().catch(() => null)) !== null, 20_000, 200),
      15_000,
    );
  });
});
