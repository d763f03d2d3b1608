import { transformPatternToRoute } from '@nestjs/microservices/utils/transform-pattern.utils.js';
import { topicOfPattern } from '../../lib/microservices/pattern-topic';

/** Nest 11's route of a pattern (no escaping), as its transformPatternToRoute wrote it. */
function nest11Route(pattern: unknown): string {
  if (typeof pattern === 'string' || typeof pattern === 'number') return `${pattern}`;
  if (typeof pattern !== 'object' || pattern === null) return String(pattern);
  const record = pattern as Record<string, unknown>;
  const parts = Object.keys(record)
    .sort((a, b) => a.localeCompare(b))
    .map((key) => {
      const value = record[key];
      return `"${key}":${typeof value === 'string' ? `"${nest11Route(value)}"` : nest11Route(value)}`;
    });
  return `{${parts.join(',')}}`;
}

const PATTERNS: unknown[] = [
  'order.created',
  'orders:eu-west_1',
  42,
  { cmd: 'sum' },
  { role: 'billing', cmd: 'quote', version: 2 },
  { cmd: 'sum', nested: { b: true, a: null, list: [1, 'two'] } },
  'has spaces and / slashes',
  'é',
  'x'.repeat(201),
  '{"cmd":"x"}',
  '{"b":1,"a":{"c":"d"}}',
  '{not json',
];

describe('topicOfPattern', () => {
  it('keeps a string (or number) that is a valid topic name as the topic', () => {
    expect(topicOfPattern('order.created')).toBe('order.created');
    expect(topicOfPattern('orders:eu-west_1')).toBe('orders:eu-west_1');
    expect(topicOfPattern(42)).toBe('42');
  });

  it('maps any other pattern to pattern.<words>.<16 hex>, whatever the key order', () => {
    expect(topicOfPattern({ cmd: 'sum' })).toMatch(/^pattern\.cmd_sum\.[0-9a-f]{16}$/);
    expect(topicOfPattern({ b: 1, a: 2 })).toBe(topicOfPattern({ a: 2, b: 1 }));
    expect(topicOfPattern({ cmd: 'a b' })).not.toBe(topicOfPattern({ cmd: 'a_b' }));
    expect(topicOfPattern('has spaces and / slashes')).toMatch(/^pattern\.has_spaces_and_slashes\.[0-9a-f]{16}$/);
    expect(topicOfPattern('é')).toMatch(/^pattern\.[0-9a-f]{16}$/);
    for (const pattern of PATTERNS) expect(topicOfPattern(pattern).length).toBeLessThanOrEqual(200);
  });

  it("maps a string that is an object's JSON to that object's topic, as Nest routes both alike", () => {
    expect(topicOfPattern('{"cmd":"x"}')).toBe(topicOfPattern({ cmd: 'x' }));
    expect(topicOfPattern('{"b":1,"a":{"c":"d"}}')).toBe(topicOfPattern({ a: { c: 'd' }, b: 1 }));
    // Not an object's JSON: the string's own topic.
    expect(topicOfPattern('{not json')).toMatch(/^pattern\.not_json\.[0-9a-f]{16}$/);
  });

  it.each(PATTERNS.map((pattern) => [JSON.stringify(pattern).slice(0, 40), pattern]))(
    '%s: a server (reading the route of Nest 11 or 12) and a client (holding the pattern) agree',
    (_name, pattern) => {
      const client = topicOfPattern(pattern);
      expect(topicOfPattern(transformPatternToRoute(pattern as never))).toBe(client);
      expect(topicOfPattern(nest11Route(pattern))).toBe(client);
    },
  );
});
