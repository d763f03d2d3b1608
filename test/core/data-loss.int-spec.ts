import type { Redis } from 'ioredis';
import type { RedisAckQueueService } from '../../lib';
import { captureLogs, expectLogs } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** The warnings that Redis lost the data of `prefix`. */
const warnings = (lines: string[], prefix: string) =>
  lines.filter((line) => line.startsWith('warn Redis at ') && line.includes(`without the data of prefix "${prefix}"`));

/**
 * Redis loses the data under a running app (a restart without persistence, a failover to an
 * empty replica): what the app declared in code (the schedules it declared, the limits its
 * consumers wrote, its topics in the registry) is declared again, with one warning; a
 * reconnect that finds the data declares nothing and says nothing.
 */
describe('declarations after Redis lost the data', () => {
  const fx = useRedis();
  // The outages this file causes on purpose.
  expectLogs(/^Lost the connection to Redis/, /^Consumer of ".*" paused/, /came back without the data/);
  let prefixes = 0;

  /** A service on a prefix of its own that declared a schedule, consumes a limited topic and pushed to another. */
  async function declaringApp() {
    const prefix = `lost${++prefixes}`;
    const [consumed, pushed, scheduled] = [uniqueTopic('consumed'), uniqueTopic('pushed'), uniqueTopic('scheduled')];
    const queue = await fx.service({ prefix, topics: { [consumed]: { globalConcurrency: 3 } } });
    expect(await queue.storedFormat()).toBe('compact');
    await queue.declareSchedules([{ topic: scheduled, name: 'hourly', everyMs: 3_600_000, payload: null }]);
    queue.consume(consumed, () => undefined);
    await queue.push(pushed, 1);
    await eventually(async () => (await queue.limits(consumed)).globalConcurrency === 3);
    await eventually(async () => (await queue.topics()).length === 2);
    const declared = {
      topics: [consumed, pushed].sort(),
      schedules: [{ topic: scheduled, name: 'hourly' }],
      limits: { globalConcurrency: 3 },
    };
    expect(await state(queue, consumed)).toEqual(declared);
    return { prefix, queue, consumed, declared };
  }

  /** What the app declared, as Redis holds it now (undefined while Redis does not answer). */
  async function state(queue: RedisAckQueueService, consumed: string) {
    try {
      return {
        topics: await queue.topics(),
        schedules: (await queue.schedules()).map(({ topic, name }) => ({ topic, name })),
        limits: await queue.limits(consumed),
      };
    } catch {
      return undefined;
    }
  }

  /** Drops every client connection of every server: each reconnects, to the data as it is. */
  const dropConnections = () =>
    Promise.all(fx.nodes().map((node: Redis) => node.call('CLIENT', 'KILL', 'TYPE', 'normal').catch(() => 0)));

  /**
   * FLUSHALL on every server, the one holding the prefix's data marker last: a check still in
   * flight from an earlier reconnect that finds the marker gone finds every other server flushed
   * already, so what it declares again is not flushed after it (on a loaded machine it was).
   */
  const flushAll = async (prefix: string) => {
    const marker = `{${prefix}:}:data-marker`;
    // Only its holder answers EXISTS for the marker; the other masters of a cluster answer MOVED.
    const holds = await Promise.all(fx.nodes().map((node: Redis) => node.exists(marker).then(Boolean, () => false)));
    const flush = (nodes: Redis[]) => Promise.all(nodes.map((node) => node.flushall().catch(() => 'OK')));
    await flush(fx.nodes().filter((_, i) => !holds[i]));
    await flush(fx.nodes().filter((_, i) => holds[i]));
  };

  it('declares everything again after FLUSHALL and a reconnect, and warns once; a reconnect to the data does nothing', async () => {
    const { queue, consumed, declared, prefix } = await declaringApp();
    const logs = captureLogs();
    try {
      // A reconnect that finds the data: nothing to declare.
      await dropConnections();
      await eventually(() => state(queue, consumed));
      // Then Redis loses everything and the app reconnects.
      await flushAll(prefix);
      await dropConnections();
      // Ceilings only against a hang: a cluster client's reconnect and the checks behind it take
      // longer on a loaded machine.
      await eventually(async () => JSON.stringify(await state(queue, consumed)) === JSON.stringify(declared), 60_000);
      await eventually(() => warnings(logs.lines, prefix).length > 0, 60_000);
      // The id counter went with the data: ids start again from a number issued after the loss.
      const { id } = await queue.push(uniqueTopic('after'), 2);
      expect(id).toMatch(/^1[A-Z]{4}0$/);
      expect(await fx.redis.get(`{${prefix}:}:id-prefixes`)).toBe('1');
      // So did the stored format: JSON (the marker is back, an older process may run) until switched.
      await eventually(async () => (await fx.redis.get(`{${prefix}:}:stored-format`)) === 'json', 60_000);
      // Checks run one at a time and in order: the first reconnect's ended before the second's warned.
      expect(warnings(logs.lines, prefix)).toEqual([
        expect.stringMatching(
          `came back without the data of prefix "${prefix}" .*: declared again 1 schedule\\(s\\), the limits of 1 ` +
            'consumed topic\\(s\\) and 2 topic\\(s\\) in the registry\\. Messages, dead letters and pauses lost ' +
            'with it are not restored',
        ),
      ]);
    } finally {
      logs.restore();
    }
    // Room for the ceilings above (each only against a hang) on a loaded machine.
  }, 240_000);

  it('declares everything again after the server holding the prefix restarts without persistence', async () => {
    const { queue, consumed, declared, prefix } = await declaringApp();
    const logs = captureLogs();
    try {
      await fx.restartServing(`{${prefix}:}:data-marker`);
      // Ceilings only against a hang: a cluster client's reconnect and the checks behind it take
      // longer on a loaded machine.
      await eventually(async () => JSON.stringify(await state(queue, consumed)) === JSON.stringify(declared), 60_000);
      await eventually(() => warnings(logs.lines, prefix).length > 0, 60_000);
      expect(warnings(logs.lines, prefix)).toHaveLength(1);
    } finally {
      logs.restore();
    }
  }, 180_000);
});
