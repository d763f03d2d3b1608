import { InvalidTopicError, RedisAckQueueService } from '../../lib';
import { assertTopic } from '../../lib/queue/validation';

describe('names and options', () => {
  it.each(['orders', 'a', 'A-Z_a.z:0-9', 'x'.repeat(200)])('accepts the topic %p', (topic) => {
    expect(() => assertTopic(topic)).not.toThrow();
  });

  it.each(['', 'a b', '{tag}', 'é', 'x'.repeat(201), null, 5, ['a']])('refuses the topic %p', (topic) => {
    expect(() => assertTopic(topic)).toThrow(InvalidTopicError);
  });

  it.each([
    [{ prefix: 'a{b' }, /Invalid prefix/],
    [{ leaseMs: 0 }, /Invalid leaseMs 0/],
    [{ maxAttempts: 0 }, /Invalid maxAttempts 0/],
    [{ concurrency: 1.5 }, /Invalid concurrency 1.5/],
    [{ batchSize: 5_000 }, /Invalid batchSize 5000: expected a whole number from 1 to 1000/],
    [{ maxPayloadBytes: -1 }, /Invalid maxPayloadBytes -1/],
    [{ drainMs: -1 }, /Invalid drainMs -1/],
    [{ backoff: { type: 'fixed' } }, /Invalid backoff/],
    [{ commandTimeoutMs: 0 }, /Invalid commandTimeoutMs 0: expected a whole number from 1 to 2147483647/],
    [{ commandTimeoutMs: 2.5 }, /Invalid commandTimeoutMs 2.5/],
    [{ commandTimeoutMs: '5000' }, /Invalid commandTimeoutMs "5000"/],
  ])('refuses service options %p before connecting', (options, text) => {
    expect(() => new RedisAckQueueService({ ...options, connection: 'redis://127.0.0.1:1' } as never)).toThrow(text);
  });
});
