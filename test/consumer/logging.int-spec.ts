import { InvalidOptionError, RedisAckQueueService, type RedisAckQueueLogLevel } from '../../lib';
import { expectLogs, loggedLines } from '../support/capture-logs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const SECRET = 'PAYLOAD-SECRET-7731';

describe('logging: retries, dead letters and drains through the Nest Logger, at the logLevel option', () => {
  const fx = useRedis();

  /**
   * One message that fails twice (a retry, then the dead letters), then one that is still
   * running at shutdown (a drain of 200 ms, then a release). Returns the library's lines.
   */
  async function scenario(logLevel?: RedisAckQueueLogLevel) {
    expectLogs(/failed on attempt/, /went to the dead letters/, /Draining/, /Released 1 unfinished/);
    const queue = await fx.service({
      ...(logLevel ? { logLevel } : {}),
      maxAttempts: 2,
      backoff: { type: 'fixed', delayMs: 10 },
    });
    const topic = uniqueTopic('logging');
    let stuck = false;
    const consumer = queue.consume<{ secret: string; stick?: boolean }>(topic, (payload) => {
      if (payload.stick) return new Promise(() => void (stuck = true));
      throw new Error('the handler failed');
    });
    const { id } = await queue.push(topic, { secret: SECRET });
    await eventually(async () => (await queue.stats(topic)).dead === 1);
    await queue.push(topic, { secret: SECRET, stick: true });
    await eventually(() => stuck);
    await consumer.close(200);
    const lines = loggedLines().filter((line) => line.context === 'RedisAckQueue' && line.message.includes(topic));
    return { topic, id, lines };
  }

  it('by default (warn): a retry as a warning, a dead letter as an error, naming topic, id, attempt and error; never the payload', async () => {
    const { topic, id, lines } = await scenario();
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ['warn', `Message ${id} of "${topic}" failed on attempt 1 of 2: Error: the handler failed; retrying in 10 ms`],
      [
        'error',
        `Message ${id} of "${topic}" went to the dead letters as failed on attempt 2: Error: the handler failed`,
      ],
      ['warn', expect.stringMatching(`^Released 1 unfinished message\\(s\\) of "${topic}"`)],
    ]);
    expect(JSON.stringify(loggedLines())).not.toContain(SECRET);
  });

  it("at 'log' also the shutdown's drain: how many handlers run and how long it waits for them", async () => {
    const { topic, lines } = await scenario('log');
    const draining = lines.filter((line) => line.message.startsWith('Draining'));
    expect(draining).toHaveLength(1);
    expect(draining[0].level).toBe('log');
    expect(draining[0].message).toMatch(
      new RegExp(`^Draining 1 running handler\\(s\\) of "${topic}" \\(up to (200|1\\d\\d) ms\\)$`),
    );
    expect(lines.map((line) => line.level)).toEqual(['warn', 'error', 'log', 'warn']);
  });

  it("at 'error' only the dead letter; at 'silent' nothing", async () => {
    expect((await scenario('error')).lines.map((line) => line.level)).toEqual(['error']);
    expect((await scenario('silent')).lines).toEqual([]);
  });

  it('refuses an unknown logLevel, naming the choices', () => {
    expect(() => new RedisAckQueueService({ logLevel: 'debug' as RedisAckQueueLogLevel })).toThrow(InvalidOptionError);
    expect(() => new RedisAckQueueService({ logLevel: 'debug' as RedisAckQueueLogLevel })).toThrow(
      `Invalid logLevel "debug": expected one of 'silent', 'error', 'warn', 'log'`,
    );
  });
});
