import { randomBytes } from 'node:crypto';
import { createEncryptionCodec, type Codec, type RedisAckQueueOptions, type RedisAckQueueService } from '../../lib';
import { ValueCodecs } from '../../lib/queue/value-codecs';
import { deferred } from '../support/async-helpers';
import { expectLogs } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { keysHolding } from '../support/key-dumps';

/**
 * What a handler and a manual consumer store of their own (durable step results, progress values,
 * results given to a manual ack) is sealed by the topic's codec, and read back opened: no canary
 * of theirs is in any key's DUMP. Without a codec it is, so the scan can see one.
 */

const key = randomBytes(32);
const codec = (): Codec => createEncryptionCodec({ keys: { k1: key }, currentKeyId: 'k1' });

let prefixes = 0;
/** A prefix per test (`codecs-<n>x`: no prefix is another's start), so a scan sees its keys only. */
const newPrefix = () => `codecs-${process.pid}-${++prefixes}x`;

describe('codecs seal what handlers and manual consumers store', () => {
  // Without rdbcompression, DUMP holds each stored text as it is (LZF could hide a canary).
  const fx = useRedis({ config: ['rdbcompression', 'no'] });
  // The step handlers fail once on purpose; a message sealed with another key is buried.
  expectLogs(/once more; retrying/, /went to the dead letters as undecodable/);

  const service = (prefix: string, options: RedisAckQueueOptions = {}) =>
    fx.service({ prefix, backoff: { type: 'fixed', delayMs: 10 }, ...options });

  /**
   * A handler that stores a step and reports progress on its first delivery, then waits for
   * `release` and fails; its second delivery reads the step back. Returns what the test checks.
   */
  async function stepsAndProgress(queue: RedisAckQueueService, canary: string) {
    const topic = uniqueTopic('codec.steps');
    const stepValue = { secret: `${canary}-step` };
    const progressValue = { secret: `${canary}-progress` };
    const holding = deferred();
    const release = deferred();
    const secondRun = deferred<unknown>();
    let ran = 0;
    queue.consume(topic, async (_payload, context) => {
      const value = await context.step('charge', () => {
        ran++;
        return stepValue;
      });
      if (context.attempt > 1) return secondRun.resolve(value);
      context.progress(progressValue);
      holding.resolve();
      await release.promise;
      throw new Error('once more');
    });
    const { id } = await queue.push(topic, { n: 1 });
    await holding.promise;
    const info = await eventually(async () => {
      const got = await queue.get(topic, id);
      return got?.progress !== undefined ? got : null;
    }).then((got) => got!);
    return {
      info,
      async finish() {
        release.resolve();
        return { again: await secondRun.promise, ran };
      },
      stepValue,
      progressValue,
      topic,
      id,
    };
  }

  it('stores step results and progress sealed, and reads them back opened (the handler and get)', async () => {
    const prefix = newPrefix();
    const queue = await service(prefix, { codec: codec() });
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    const run = await stepsAndProgress(queue, canary);
    expect(run.info.progress).toEqual(run.progressValue);
    expect(run.info.steps).toEqual({ charge: run.stepValue });
    expect(await keysHolding(fx.redis, prefix, canary)).toEqual([]);
    // As stored: `~` and base64, in the steps hash and the progress hash.
    const steps = await fx.redis.hgetall(`{${prefix}:${run.topic}}:steps:${run.id}`);
    expect(Object.keys(steps)).toEqual(['charge']);
    expect(steps.charge).toMatch(/^~[A-Za-z0-9+/]+=*$/);
    expect(await fx.redis.hget(`{${prefix}:${run.topic}}:progress`, run.id)).toMatch(/^~[A-Za-z0-9+/]+=*$/);
    // A process without the codec still looks it up: what it cannot open is left out.
    const blind = await (await service(prefix)).get(run.topic, run.id);
    expect(blind).toMatchObject({ state: 'leased', steps: { charge: undefined } });
    expect(blind).not.toHaveProperty('progress');
    // The next delivery reads the sealed step back, opened, without running it again.
    expect(await run.finish()).toEqual({ again: run.stepValue, ran: 1 });
  });

  it('leaves them readable without a codec (the control: the scan sees a canary)', async () => {
    const prefix = newPrefix();
    const queue = await service(prefix);
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    const run = await stepsAndProgress(queue, canary);
    expect(run.info.progress).toEqual(run.progressValue);
    const holding = await keysHolding(fx.redis, prefix, canary);
    expect(holding.some((name) => name.endsWith(':progress'))).toBe(true);
    expect(holding.some((name) => name.includes(':steps'))).toBe(true);
    expect(await run.finish()).toEqual({ again: run.stepValue, ran: 1 });
  });

  it('opens what reserve() leases, and seals the result given to ack()', async () => {
    const prefix = newPrefix();
    const queue = await service(prefix, { codec: codec(), keepCompleted: true });
    const topic = uniqueTopic('codec.manual');
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    await queue.push(topic, { secret: `${canary}-payload` }, { id: 'm1', headers: { tenant: `${canary}-header` } });
    const [message] = await queue.reserve(topic);
    expect(message).toMatchObject({
      id: 'm1',
      payload: { secret: `${canary}-payload` },
      headers: { tenant: `${canary}-header` },
    });
    expect(message).not.toHaveProperty('sealed');
    expect(await queue.ack(message, { receipt: `${canary}-result` })).toBe(true);
    expect(await keysHolding(fx.redis, prefix, canary)).toEqual([]);
    // The completed record keeps the result as `"s":"~<base64>"`, which the topic's codec opens.
    const record = JSON.parse((await fx.redis.hget(`{${prefix}:${topic}}:messages`, 'm1'))!) as { s?: string };
    expect(record).not.toHaveProperty('r');
    expect(record.s).toMatch(/^~/);
    const opened = await ValueCodecs.of({ codec: codec() }).open(topic, record.s!);
    expect(JSON.parse(opened)).toEqual({ receipt: `${canary}-result` });
  });

  it('stores a manual ack result readable without a codec (the control)', async () => {
    const prefix = newPrefix();
    const queue = await service(prefix, { keepCompleted: true });
    const topic = uniqueTopic('codec.manual');
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    await queue.push(topic, { n: 1 }, { id: 'm1' });
    const [message] = await queue.reserve(topic);
    await queue.ack(message, { receipt: `${canary}-result` });
    expect(await keysHolding(fx.redis, prefix, canary)).toEqual([`{${prefix}:${topic}}:messages`]);
  });

  it('seals a flow child result given to ack(), and the parent handler reads it opened', async () => {
    const prefix = newPrefix();
    const queue = await service(prefix, { codec: codec() });
    const [parent, child] = [uniqueTopic('codec.parent'), uniqueTopic('codec.child')];
    const canary = `CANARY-${randomBytes(6).toString('hex')}`;
    await queue.pushFlow({ topic: parent, id: 'p', payload: 1, children: [{ topic: child, id: 'c', payload: 2 }] });
    const [message] = await queue.reserve(child);
    expect(await queue.ack(message, { receipt: `${canary}-child` })).toBe(true);
    // Handed to the parent sealed: the parent's record of its child holds no canary.
    expect(await keysHolding(fx.redis, prefix, canary)).toEqual([]);
    const seen = deferred<unknown>();
    queue.consume(parent, (_payload, context) => seen.resolve(context.childResults()));
    expect(await seen.promise).toEqual({ [child]: { c: { receipt: `${canary}-child` } } });
  });

  it('defers a leased message sealed by a codec this process lacks, and buries one it cannot open', async () => {
    const prefix = newPrefix();
    const sealing = await service(prefix, { codec: codec() });
    const topic = uniqueTopic('codec.manual');
    await sealing.push(topic, { n: 1 }, { id: 'm1' });

    // No codec here: handed back for a process that has one, its attempt not counted.
    const without = await service(prefix);
    expect(await without.reserve(topic)).toEqual([]);
    expect(await without.get(topic, 'm1')).toMatchObject({ state: 'delayed', attempt: 0 });
    expect(await without.deadLetters(topic)).toEqual([]);

    // Another key: it cannot be opened here or anywhere, so it goes to the dead letters at once.
    await sealing.push(topic, { n: 2 }, { id: 'm2' });
    const otherKey = createEncryptionCodec({ keys: { k2: randomBytes(32) }, currentKeyId: 'k2' });
    const wrong = await service(prefix, { codec: otherKey });
    expect(await wrong.reserve(topic)).toEqual([]);
    const dead = await eventually(
      async () => (await sealing.deadLetters(topic)).find((letter) => letter.id === 'm2') ?? null,
    ).then((letter) => letter!);
    expect(dead).toMatchObject({ reason: 'undecodable', attempt: 1 });
    expect(dead.error).toEqual(expect.any(String));
  });
});
