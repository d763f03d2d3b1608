import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import {
  MessageRejectedError,
  RedisAckQueueMetrics,
  RedisAckQueueMetricsModule,
  RedisAckQueueModule,
  RedisAckQueueService,
} from '../../lib';
import { internalsOf } from '../../lib/queue/queue-internals';
import { expectLogs } from '../support/capture-logs';
import { gate } from '../support/gate';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** The value of one sample line of the text exposition, undefined when absent. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('Prometheus metrics', () => {
  const fx = useRedis();
  let metrics: RedisAckQueueMetrics | undefined;
  afterEach(() => metrics?.close());

  async function withMetrics(options: { topics?: string[]; scrapeTimeoutMs?: number } = {}, history = true) {
    const queue = await fx.service({ history });
    const registry = new Registry();
    metrics = new RedisAckQueueMetrics(queue, { registry, ...options });
    return { queue, registry };
  }

  it('counts outcomes per topic and observes handler duration and wait', async () => {
    expectLogs(/failed on attempt/, /went to the dead letters/);
    const { queue, registry } = await withMetrics();
    const topic = uniqueTopic();
    await queue.push(topic, 'ok');
    await queue.push(topic, 'fail', { maxAttempts: 2 });
    await queue.push(topic, 'ok', { id: 'same' });
    await queue.push(topic, 'ok', { id: 'same' }); // a duplicate is not counted
    const consumer = queue.consume(
      topic,
      (payload) => {
        if (payload === 'fail') throw new Error('no');
      },
      { backoff: { type: 'fixed', delayMs: 1 } },
    );
    await queue.waitUntilIdle(topic);
    await consumer.close();
    const text = await registry.metrics();
    const t = `topic="${topic}"`;
    expect(sample(text, 'redis_ack_queue_pushed_total', t)).toBe(3);
    expect(sample(text, 'redis_ack_queue_acked_total', t)).toBe(2);
    expect(sample(text, 'redis_ack_queue_retried_total', t)).toBe(1);
    expect(sample(text, 'redis_ack_queue_dead_total', t)).toBe(1);
    expect(sample(text, 'redis_ack_queue_handler_duration_seconds_count', t)).toBe(4);
    // Every delivery, the retry too.
    expect(sample(text, 'redis_ack_queue_wait_seconds_count', t)).toBe(4);
    expect(text).toContain('# TYPE redis_ack_queue_lease_lost_total counter');
    expect(text).toContain('# TYPE redis_ack_queue_rejected_total counter');
    expect(text).toContain('# TYPE redis_ack_queue_cancelled_total counter');
    // Only topic labels: no id or payload in any sample.
    expect(text).not.toMatch(/same|"ok"|"fail"/);
  });

  it('counts a message rejected by its handler (MessageRejectedError) as rejected and as dead; the dead event says why', async () => {
    expectLogs(/went to the dead letters as rejected/);
    const { queue, registry } = await withMetrics();
    const topic = uniqueTopic();
    const reasons: unknown[] = [];
    queue.events$.subscribe((event) => event.type === 'dead' && reasons.push(event.reason));
    await queue.push(topic, 'not an order');
    const consumer = queue.consume(topic, () => {
      throw new MessageRejectedError('not an order');
    });
    await queue.waitUntilIdle(topic);
    await consumer.close();
    const text = await registry.metrics();
    expect(sample(text, 'redis_ack_queue_rejected_total', `topic="${topic}"`)).toBe(1);
    expect(sample(text, 'redis_ack_queue_dead_total', `topic="${topic}"`)).toBe(1);
    expect(reasons).toEqual(['rejected']);
  });

  it('keeps exact counts across scrapes (manual acks, nacks and cancels too) and counts nothing after close', async () => {
    // Without the history, whose recorder is a tally too: the metrics are then the only one.
    const { queue, registry } = await withMetrics({}, false);
    const topic = uniqueTopic();
    const t = `topic="${topic}"`;
    const tally = internalsOf(queue).tally;
    expect(tally.active).toBe(true);
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }, { payload: 3, id: 'gone' }]);
    expect(sample(await registry.metrics(), 'redis_ack_queue_pushed_total', t)).toBe(3);
    await queue.push(topic, 4);
    await queue.cancel(topic, 'gone');
    const [first, second] = await queue.reserve(topic, { count: 2 });
    await queue.ack(first);
    await queue.nack(second);
    for (const text of [await registry.metrics(), await registry.metrics()]) {
      expect(sample(text, 'redis_ack_queue_pushed_total', t)).toBe(4);
      expect(sample(text, 'redis_ack_queue_cancelled_total', t)).toBe(1);
      expect(sample(text, 'redis_ack_queue_acked_total', t)).toBe(1);
      expect(sample(text, 'redis_ack_queue_retried_total', t)).toBe(1);
      expect(sample(text, 'redis_ack_queue_dead_total', t)).toBeUndefined();
      // A manual ack knows no handler time: no observation.
      expect(sample(text, 'redis_ack_queue_handler_duration_seconds_count', t)).toBeUndefined();
    }
    metrics!.close();
    metrics = undefined;
    expect(tally.active).toBe(false);
    expect(await registry.metrics()).not.toContain('redis_ack_queue');
  });

  it('counts a lost lease without a subscriber on events$ (none builds events for the metrics)', async () => {
    expectLogs(/Lost the lease of message/);
    const { queue, registry } = await withMetrics();
    // Internal: any subscriber there would make every delivery build its event objects.
    expect((queue as unknown as { core: { events: { observed: boolean } } }).core.events.observed).toBe(false);
    const topic = uniqueTopic();
    const proceed = gate();
    const consumer = queue.consume(topic, async () => {
      await proceed.promise;
    });
    const { id } = await queue.push(topic, 'x');
    await eventually(() => consumer.running === 1);
    await fx.redis.hset(`{ackq:${topic}}:tokens`, id, 'someone-else');
    proceed.open();
    const t = `topic="${topic}"`;
    await eventually(async () => sample(await registry.metrics(), 'redis_ack_queue_lease_lost_total', t) === 1);
    expect(sample(await registry.metrics(), 'redis_ack_queue_acked_total', t)).toBeUndefined();
    await consumer.close();
  });

  it('reads the gauges at scrape time: counts per state and the oldest ready age', async () => {
    const topic = uniqueTopic();
    const { queue, registry } = await withMetrics({ topics: [topic] });
    await queue.push(topic, 'a');
    await queue.push(topic, 'b');
    await queue.push(topic, 'later', { delayMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const text = await registry.metrics();
    const t = `topic="${topic}"`;
    expect(sample(text, 'redis_ack_queue_messages', `${t},state="ready"`)).toBe(2);
    expect(sample(text, 'redis_ack_queue_messages', `${t},state="delayed"`)).toBe(1);
    expect(sample(text, 'redis_ack_queue_messages', `${t},state="leased"`)).toBe(0);
    expect(sample(text, 'redis_ack_queue_oldest_ready_age_seconds', t)).toBeGreaterThanOrEqual(0.19);
    expect(sample(text, 'redis_ack_queue_oldest_ready_age_seconds', t)).toBeLessThan(5);
    await queue.reserve(topic, { count: 2 });
    const after = await registry.metrics();
    expect(sample(after, 'redis_ack_queue_messages', `${t},state="leased"`)).toBe(2);
    expect(sample(after, 'redis_ack_queue_oldest_ready_age_seconds', t)).toBe(0);
  });

  it('reads completed messages kept (keepCompleted) and the paused state as gauges', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ keepCompleted: true });
    const registry = new Registry();
    metrics = new RedisAckQueueMetrics(queue, { registry, topics: [topic] });
    await queue.pushMany(topic, [{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    for (const message of await queue.reserve(topic, { count: 2 })) await queue.ack(message, 'done');
    const t = `topic="${topic}"`;
    const before = await registry.metrics();
    expect(sample(before, 'redis_ack_queue_messages', `${t},state="completed"`)).toBe(2);
    expect(sample(before, 'redis_ack_queue_messages', `${t},state="ready"`)).toBe(1);
    expect(sample(before, 'redis_ack_queue_paused', t)).toBe(0);
    await queue.pause(topic);
    expect(sample(await registry.metrics(), 'redis_ack_queue_paused', t)).toBe(1);
    expect(await queue.gauges(topic)).toMatchObject({ completed: 2, paused: true });
  });

  it('sums the partitions of a partitioned topic and takes the oldest age of any', async () => {
    const topic = uniqueTopic();
    const queue = await fx.service({ topics: { [topic]: { partitions: 3 } } });
    await queue.pushMany(
      topic,
      Array.from({ length: 6 }, (_, n) => ({ payload: n })),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    await queue.push(topic, 'young');
    const gauges = await queue.gauges(topic);
    expect(gauges).toMatchObject({ ready: 7, delayed: 0, leased: 0, dead: 0 });
    expect(gauges.oldestReadyAgeMs).toBeGreaterThanOrEqual(145);
  });

  it('answers a scrape within scrapeTimeoutMs when Redis does not answer, without the gauges', async () => {
    const topic = uniqueTopic();
    const { queue, registry } = await withMetrics({ topics: [topic], scrapeTimeoutMs: 200 });
    await queue.push(topic, 'a');
    expectLogs(/Metrics: reading the gauges of topic .* failed \(no answer within 200 ms\)/);
    const pauser = fx.client();
    await pauser.call('CLIENT', 'PAUSE', '1500', 'ALL');
    // Answered while Redis was still paused (its own 200 ms bound, not the pause's end), told by a
    // timer of the pause's length rather than a guess at this machine's speed.
    let pauseOver = false;
    const pauseEnds = setTimeout(() => (pauseOver = true), 1_500);
    const text = await registry.metrics();
    clearTimeout(pauseEnds);
    expect(pauseOver).toBe(false);
    expect(sample(text, 'redis_ack_queue_messages', `topic="${topic}",state="ready"`)).toBeUndefined();
    expect(sample(text, 'redis_ack_queue_pushed_total', `topic="${topic}"`)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1_400));
    pauser.disconnect();
  });

  it('serves the metrics at a path of the Nest app with RedisAckQueueMetricsModule', async () => {
    const topic = uniqueTopic();
    const registry = new Registry();
    @Module({
      imports: [
        RedisAckQueueModule.forRoot({ connection: fx.connection }),
        RedisAckQueueMetricsModule.forRoot({ path: '/queue-metrics', registry, topics: [topic] }),
      ],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const queue = app.get(RedisAckQueueService);
      await queue.push(topic, 'x');
      const response = await fetch(`${await app.getUrl()}/queue-metrics`);
      expect(response.headers.get('content-type')).toContain('text/plain');
      const text = await response.text();
      expect(sample(text, 'redis_ack_queue_pushed_total', `topic="${topic}"`)).toBe(1);
      expect(sample(text, 'redis_ack_queue_messages', `topic="${topic}",state="ready"`)).toBe(1);
    } finally {
      await app.close();
    }
    expect(await registry.metrics()).not.toContain('redis_ack_queue_pushed_total');
  });
});
