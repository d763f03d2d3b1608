import { randomBytes } from 'node:crypto';
import { createEncryptionCodec, type DeadLetter, type RedisAckQueueEvent, type RedisAckQueueService } from '../../lib';
import { queueKeys } from '../../lib/engine/keys/queue-keys';
import { captureLogs } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * A sealed body changed in Redis, or sealed under a key the consumer lacks, cannot be opened: the
 * message goes to the dead letters as `undecodable` at once, its neighbours flow on, and nothing
 * said about it (the dead letter's error, the log, the events) holds the payload, a header or a key.
 */
describe('codecs: a changed or foreign sealed message', () => {
  const fx = useRedis();
  const SECRET = 'secret-4b1d7e-payload-text';
  const HEADER = 'secret-header-9c2a';

  const encryption = (id: string, key: Buffer) => createEncryptionCodec({ keys: { [id]: key }, currentKeyId: id });

  /** Every way a key may be written down: none of them may appear in what the queue says. */
  const keyTexts = (key: Buffer) => [key.toString('hex'), key.toString('base64'), key.toString('base64url')];

  async function pushTen(queue: RedisAckQueueService, topic: string, from: number): Promise<string[]> {
    const ids = Array.from({ length: 10 }, (_, i) => `m${from + i}`);
    await queue.pushMany(
      topic,
      ids.map((id, i) => ({ id, payload: { n: from + i, secret: SECRET }, headers: { note: HEADER } })),
    );
    return ids;
  }

  /** Consumes `topic` until `handled` ids ran and `dead` went to the dead letters; what was said meanwhile. */
  async function consumeUntil(queue: RedisAckQueueService, topic: string, handled: number, dead: number) {
    const ran: string[] = [];
    const events: RedisAckQueueEvent[] = [];
    const subscription = queue.events$.subscribe((event) => events.push(event));
    const logs = captureLogs();
    try {
      const consumer = queue.consume(topic, (payload: { secret: string }, context) => {
        expect(payload.secret).toBe(SECRET);
        ran.push(context.id);
      });
      await eventually(async () => ran.length === handled && (await queue.count(topic, 'dead')) === dead, 30_000);
      await queue.waitUntilIdle(topic);
      await consumer.close();
    } finally {
      subscription.unsubscribe();
      logs.restore();
    }
    const letters = await queue.deadLetters(topic);
    return { ran, letters, events, said: [...logs.lines, ...events.map((event) => JSON.stringify(event))] };
  }

  function expectNothingSecret(said: string[], letters: DeadLetter[], keys: Buffer[]): void {
    const texts = [...said, ...letters.map((letter) => letter.error ?? '')];
    for (const secret of [SECRET, HEADER, ...keys.flatMap(keyTexts)])
      expect(texts.filter((text) => text.includes(secret))).toEqual([]);
  }

  it('a body changed in Redis fails authentication: undecodable dead letter, the others run', async () => {
    const key = randomBytes(32);
    const queue = await fx.service({ codec: encryption('k1', key), history: false });
    const topic = uniqueTopic('tamper');
    const ids = await pushTen(queue, topic, 0);

    // One byte of the ciphertext of m4's sealed body flipped, where it is stored.
    const hash = queueKeys('ackq', topic).messages;
    const body = (await fx.redis.hget(hash, 'm4'))!;
    const sealed = /"e":"~([A-Za-z0-9+/=]+)"/.exec(body)![1];
    const bytes = Buffer.from(sealed, 'base64');
    expect(bytes[0]).toBe(0xe1);
    const ciphertextAt = 2 + bytes[1] + 12;
    bytes[ciphertextAt + 3] ^= 0x01;
    await fx.redis.hset(hash, 'm4', body.replace(sealed, bytes.toString('base64')));

    const { ran, letters, said } = await consumeUntil(queue, topic, 9, 1);
    expect(ran.sort()).toEqual(ids.filter((id) => id !== 'm4').sort());
    expect(letters).toEqual([
      expect.objectContaining({ id: 'm4', reason: 'undecodable', attempt: 1, error: expect.any(String) as unknown }),
    ]);
    expect(letters[0].error).toMatch(/failed authentication under key "k1"/);
    expect(said.some((line) => line.includes('m4'))).toBe(true);
    expectNothingSecret(said, letters, [key]);
  });

  it('a message sealed under a key id the consumer lacks: unknown-key, undecodable dead letter', async () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const producer = await fx.service({ codec: encryption('k-new', newKey), history: false });
    const queue = await fx.service({ codec: encryption('k-old', oldKey), history: false });
    const topic = uniqueTopic('unknown-key');
    const foreign = await pushTen(producer, topic, 0);
    const own = await pushTen(queue, topic, 10);

    const { ran, letters, said } = await consumeUntil(queue, topic, 10, 10);
    expect(ran.sort()).toEqual(own.sort());
    expect(letters.map((letter) => letter.id).sort()).toEqual(foreign.sort());
    for (const letter of letters) {
      expect(letter).toMatchObject({ reason: 'undecodable', attempt: 1 });
      expect(letter.error).toMatch(/encrypted with key "k-new", which this process does not have/);
    }
    expectNothingSecret(said, letters, [oldKey, newKey]);
  });
});
