import {
  decodeReserved,
  decodeReserveReply,
  encodeBody,
  parseStoredBody,
  strictStringify,
} from '../../lib/engine/codecs/wire-format';

describe('message codec', () => {
  it('stores payload, headers and maxAttempts compactly, starting with the payload', () => {
    const body = encodeBody('t', { a: [1, 'b', null] }, { headers: { x: 'y' }, maxAttempts: 3 }, 1_000);
    expect(body).toBe('{"p":{"a":[1,"b",null]},"h":{"x":"y"},"m":3}');
    expect(encodeBody('t', null, {}, 1_000)).toBe('{"p":null}');
  });

  it('reads back what the push script stored', () => {
    const stored = '{"t":1700000000000,"p":{"n":1},"h":{"x":"y"}}';
    expect(decodeReserved('t', 'id', stored, 2, '9', 5, 4)).toEqual({
      id: 'id',
      topic: 't',
      payload: { n: 1 },
      headers: { x: 'y' },
      attempt: 2,
      maxAttempts: 4,
      enqueuedAt: 1_700_000_000_000,
      token: '9',
      leaseDeadline: 5,
    });
  });

  it("reads a compact body back, also after a retry's due time, and when its time starts with a digit", () => {
    // 500_000_000_000 in base 36 starts with a digit, as a due time does.
    const body = `${(500_000_000_000).toString(36)}|{"n":1}`;
    expect(parseStoredBody(body)).toEqual({ t: 500_000_000_000, p: { n: 1 } });
    expect(parseStoredBody(`${(500_000_000_000).toString(36)}|`)).toEqual({ t: 500_000_000_000, p: undefined });
    expect(() => parseStoredBody('x y|1')).toThrow();
    const reply = [5, -1, 90, 0, 0, 0, 'a', `3.1 ${body}`, 'b', `4.2 1700000000500 ${body}`];
    const { messages, unreadable } = decodeReserveReply('t', reply, 5);
    expect(unreadable).toEqual([]);
    expect(messages.map((m) => [m.id, m.dueAt, m.payload, m.enqueuedAt, m.headers])).toEqual([
      ['a', undefined, { n: 1 }, 500_000_000_000, {}],
      ['b', 1_700_000_000_500, { n: 1 }, 500_000_000_000, {}],
    ]);
  });

  it('measures the limit in UTF-8 bytes, not characters', () => {
    expect(() => encodeBody('t', 'é'.repeat(10), {}, 21)).toThrow(/22 bytes with its headers, over the limit of 21/);
    expect(() => encodeBody('t', 'é'.repeat(10), {}, 22)).not.toThrow();
  });

  it('keeps Dates as ISO strings (their toJSON), and refuses undefined fields, which JSON would drop', () => {
    expect(encodeBody('t', { d: new Date(0) }, {}, 1_000)).toBe('{"p":{"d":"1970-01-01T00:00:00.000Z"}}');
    expect(() => encodeBody('t', { d: new Date(0), u: undefined }, {}, 1_000)).toThrow(/undefined at depth 1/);
  });

  it('encodes a plain payload and one the strict path checks alike, and refuses the same values', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const deep: unknown[] = [];
    let level = deep;
    for (let i = 0; i < 40; i++) level.push((level = []));
    const kept = [
      { a: [1, 'b', null, true, { c: -0.5 }], e: {}, f: [] },
      new Point(1, 2),
      Object.assign(Object.create({ inherited: () => 1 }) as object, { own: 1 }),
      { d: new Date(0), n: [new Date(1)] },
      deep,
      'text',
      0,
    ];
    for (const value of kept) expect(strictStringify(value)).toEqual({ json: JSON.stringify(value) });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const holey: unknown[] = [1];
    holey[2] = 3;
    const refused = [{ u: undefined }, holey, { n: NaN }, { f: () => 1 }, { m: new Map() }, cyclic];
    for (const value of refused) expect(strictStringify(value)).toHaveProperty('problem');
    const throwing = {
      get boom(): number {
        throw new Error('getter');
      },
    };
    expect(strictStringify(throwing)).toEqual({ problem: 'a toJSON method or getter threw' });
  });

  it('counts the headers toward the limit', () => {
    expect(() => encodeBody('t', 1, { headers: { k: 'v'.repeat(20) } }, 21)).toThrow(/29 bytes with its headers/);
    expect(encodeBody('t', 1, { headers: { k: 'v' } }, 21)).toBe('{"p":1,"h":{"k":"v"}}');
  });

  it("reads a retry's due time from a reserve reply, where the script gave one", () => {
    const body = '{"t":1700000000000,"p":1}';
    const reply = [5, -1, 90, 0, 0, 0, 'a', `3.1 ${body}`, 'b', `4.2 1700000000500 ${body}`, 'c', `5.2  ${body}`];
    const { messages } = decodeReserveReply('t', reply, 5);
    expect(messages.map((m) => [m.id, m.token, m.attempt, m.dueAt, m.payload])).toEqual([
      ['a', '3.1', 1, undefined, 1],
      ['b', '4.2', 2, 1_700_000_000_500, 1],
      ['c', '5.2', 2, undefined, 1],
    ]);
  });

  it('reads the three arrays a full reserve answer ends with: outbox entries, flow parents, expired messages', () => {
    const body = '{"t":1700000000000,"p":1}';
    const reply = [5, -1, 90, 0, 0, 1, 'a', `3.1 ${body}`, ['c', 'entry'], [], ['x', 'd', 'y', 'x']];
    const { messages, deadInRedis, flowEnded, flowParents, expired } = decodeReserveReply('t', reply, 5);
    expect(messages.map((m) => m.id)).toEqual(['a']);
    expect([deadInRedis, flowEnded, flowParents]).toEqual([1, ['c', 'entry'], []]);
    expect(expired).toEqual([
      { id: 'x', onExpire: 'dead-letter' },
      { id: 'y', onExpire: 'drop' },
    ]);
    // An idle answer has none of them.
    expect(decodeReserveReply('t', [5, 100, 90, 0, 0], 5)).toMatchObject({ messages: [], expired: [], flowEnded: [] });
  });
});
