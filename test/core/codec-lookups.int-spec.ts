import { randomBytes } from 'node:crypto';
import { createEncryptionCodec, type RedisAckQueueService } from '../../lib';
import type { MessageContext } from '../../lib/interfaces';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/**
 * Lookups of a topic whose payloads, headers and results an encryption codec seals: the process
 * with the codec reads what a topic without one reads (and is told what was sealed); a process
 * without it reads the same states, counts, groups, keys and flows, each sealed value described
 * (size, key id) in place of its value, and never fails on one.
 */
describe('lookups of sealed values', () => {
  const fx = useRedis();
  const codec = () => createEncryptionCodec({ keys: { v1: randomBytes(32) }, currentKeyId: 'v1' });

  /** Times, ids made at push and sealed descriptions left out, the topic named T: what a topic without a codec shows alike. */
  const VOLATILE = [
    'enqueuedAt',
    'completedAt',
    'durationMs',
    'deadAt',
    'dueAt',
    'leaseDeadline',
    'sealed',
    'sealedResult',
  ];
  function same(value: unknown, topic: string, keyedId: string): unknown {
    const text = JSON.stringify(value).replaceAll(topic, 'T').replaceAll(keyedId, 'K');
    return JSON.parse(text, (key, each: unknown) => {
      if (VOLATILE.includes(key)) return undefined;
      // Stack frames differ between the runs; a parent's children come in its hash's order.
      if (key === 'error' && typeof each === 'string') return each.split('\n')[0];
      if (key === 'children' && Array.isArray(each))
        return [...(each as { id: string }[])].sort((a, b) => a.id.localeCompare(b.id));
      return each;
    }) as unknown;
  }

  /**
   * On `topic`: a group of two acked, one dead letter, one debounced message waiting; a flow of a
   * parent on `${topic}.p` whose two children on `${topic}.c` were acked with results, looked up
   * while it waits, then run. Returns every lookup, in order.
   */
  async function scenario(queue: RedisAckQueueService, topic: string) {
    const [parent, child] = [`${topic}.p`, `${topic}.c`];
    await queue.push(topic, { n: 1 }, { id: 'a', group: 'g1', headers: { h: 'one' } });
    await queue.push(topic, { n: 2 }, { id: 'b', group: 'g1' });
    await queue.push(topic, { n: 3, die: true }, { id: 'x', group: 'g2', maxAttempts: 1, headers: { h: 'dead' } });
    const debounce = { key: 'doc-1', delayMs: 600_000 };
    const first = await queue.push(topic, { v: 1 }, { debounce, headers: { from: 'first' } });
    expect(await queue.push(topic, { v: 2 }, { debounce, headers: { from: 'second' } })).toMatchObject({
      id: first.id,
      debounced: true,
    });
    queue.consume(topic, (payload: { n: number; die?: boolean }) => {
      if (payload.die) throw new Error('boom');
      return { done: payload.n };
    });
    await eventually(
      async () => (await queue.stats(topic)).dead === 1 && (await queue.count(topic, 'completed')) === 2,
    );

    await queue.pushFlow({
      topic: parent,
      id: 'p',
      payload: { merge: true },
      children: [
        { topic: child, id: 'c1', payload: { page: 1 } },
        { topic: child, id: 'c2', payload: { page: 2 } },
      ],
    });
    queue.consume(child, (payload: { page: number }) => ({ text: `page ${payload.page}` }));
    await eventually(async () => (await queue.get(parent, 'p'))?.state === 'ready');
    const waiting = { parent: await queue.get(parent, 'p'), flow: await queue.getFlow(parent, 'p') };
    queue.consume(parent, (_payload: unknown, context: MessageContext) => context.childResults());
    await eventually(async () => (await queue.get(parent, 'p'))?.state === 'completed');

    return {
      stats: await queue.stats(topic),
      counts: await Promise.all((['completed', 'dead', 'delayed'] as const).map((s) => queue.count(topic, s))),
      a: await queue.get(topic, 'a'),
      x: await queue.get(topic, 'x'),
      keyed: await queue.get(topic, first.id),
      completed: await queue.list(topic, 'completed'),
      completedPreview: await queue.list(topic, 'completed', { preview: 64 }),
      dead: await queue.list(topic, 'dead'),
      deadPreview: await queue.list(topic, 'dead', { preview: 64 }),
      delayedPreview: await queue.list(topic, 'delayed', { preview: 8 }),
      deadLetters: await queue.deadLetters(topic),
      waiting,
      parent: await queue.get(parent, 'p'),
    };
  }

  it('reads in the codec process what it reads without a codec, and says what was sealed', async () => {
    const sealer = await fx.service({ codec: codec(), keepCompleted: true });
    const plain = await fx.service({ keepCompleted: true });
    const topics = [uniqueTopic('sealed'), uniqueTopic('plain')];
    const [sealed, open] = await Promise.all([scenario(sealer, topics[0]), scenario(plain, topics[1])]);
    // Previews differ by nature: a sealed value's preview is its description (its headers, sealed with it, unread).
    const withoutPreviews = (s: typeof sealed) => ({
      ...s,
      completedPreview: s.completedPreview.map(({ preview: _p, ...row }) => row),
      deadPreview: s.deadPreview.map(({ preview: _p, headers: _h, ...row }) => row),
      delayedPreview: s.delayedPreview.map(({ preview: _p, headers: _h, ...row }) => row),
    });
    expect(same(withoutPreviews(sealed), topics[0], sealed.keyed!.id)).toEqual(
      same(withoutPreviews(open), topics[1], open.keyed!.id),
    );

    // What the plain topic shows, so the comparison above compares something.
    expect(open.a).toMatchObject({ state: 'completed', payload: { n: 1 }, headers: { h: 'one' }, result: { done: 1 } });
    expect(open.x).toMatchObject({ state: 'dead', group: 'g2' });
    expect(open.keyed).toMatchObject({
      payload: { v: 2 },
      headers: { from: 'second' },
      key: 'doc-1',
      mode: 'debounce',
    });
    expect(Object.values(open.parent!.result as object)).toEqual([{ c1: { text: 'page 1' }, c2: { text: 'page 2' } }]);
    expect(open.deadLetters).toHaveLength(1);
    expect(open.a!.sealed).toBeUndefined();

    const described = { bytes: expect.any(Number) as unknown, keyId: 'v1' };
    expect(sealed.a).toMatchObject({ payload: { n: 1 }, sealed: described, sealedResult: described });
    expect(sealed.a!.sealed!.undecodable).toBeUndefined();
    expect(sealed.x).toMatchObject({ state: 'dead', payload: { n: 3, die: true }, sealed: described });
    expect(sealed.deadLetters[0]).toMatchObject({
      payload: { n: 3, die: true },
      headers: { h: 'dead' },
      sealed: described,
    });
    expect(sealed.keyed).toMatchObject({ payload: { v: 2 }, headers: { from: 'second' }, sealed: described });
    for (const row of sealed.completedPreview) {
      expect(row.preview).toBeUndefined();
      expect(row.sealedResult).toEqual(described);
    }
    expect(sealed.deadPreview[0].sealed).toEqual(described);
    expect(sealed.delayedPreview[0]).toMatchObject({ sealed: described, key: 'doc-1', mode: 'debounce' });
    expect(sealed.delayedPreview[0].preview).toBeUndefined();
    for (const child of sealed.waiting.parent!.children!) expect(child.sealedResult).toEqual(described);
    for (const node of sealed.waiting.flow!.children) expect(node.sealedResult).toEqual(described);
    const results = sealed.waiting.flow!.children.map((node) => [node.id, node.result]).sort();
    expect(results).toEqual([
      ['c1', { text: 'page 1' }],
      ['c2', { text: 'page 2' }],
    ]);
  });

  it('reads the same states and counts in a process without the codec, each sealed value described', async () => {
    const sealer = await fx.service({ codec: codec(), keepCompleted: true });
    const topic = uniqueTopic('sealed');
    const seen = await scenario(sealer, topic);
    const blind = await fx.service({ keepCompleted: true });
    const undecodable = { bytes: expect.any(Number) as unknown, keyId: 'v1', undecodable: 'no-codec' };

    expect(await blind.stats(topic)).toEqual(seen.stats);
    expect(await blind.count(topic, 'completed')).toBe(2);
    const a = await blind.get(topic, 'a');
    expect(a).toMatchObject({ state: 'completed', sealed: undecodable, sealedResult: undecodable });
    expect(a!.payload).toBeUndefined();
    expect(a!.headers).toEqual({});
    expect(a!.result).toBeUndefined();
    expect(a!.sealed!.bytes).toBe(seen.a!.sealed!.bytes);
    const keyed = await blind.get(topic, seen.keyed!.id);
    expect(keyed).toMatchObject({ state: 'delayed', key: 'doc-1', mode: 'debounce', headers: {}, sealed: undecodable });
    expect((await blind.list(topic, 'dead')).map((row) => [row.id, row.reason, row.group, row.sealed])).toEqual([
      ['x', 'failed', 'g2', undecodable],
    ]);
    const [letter] = await blind.deadLetters(topic);
    expect(letter).toMatchObject({ id: 'x', reason: 'failed', headers: {}, sealed: undecodable });
    expect(letter.payload).toBeUndefined();
    // A preview, cut in Redis, tells the same size and key id as the whole value.
    const [row] = await blind.list(topic, 'dead', { preview: 16 });
    expect(row.sealed).toEqual({ bytes: seen.x!.sealed!.bytes, keyId: 'v1' });
    const results = await blind.list(topic, 'completed', { preview: 16 });
    expect(results.find((each) => each.id === 'a')!.sealedResult).toEqual({
      bytes: seen.a!.sealedResult!.bytes,
      keyId: 'v1',
    });

    const parent = await blind.get(`${topic}.p`, 'p');
    expect(parent).toMatchObject({ state: 'completed', sealedResult: undecodable });
    const flow = await blind.getFlow(`${topic}.p`, 'p');
    expect(flow).toMatchObject({ state: 'completed', sealedResult: undecodable });

    // A wrong key under the same id: authentication fails, the lookup still answers.
    const wrong = await fx.service({ codec: codec(), keepCompleted: true });
    expect(await wrong.get(topic, 'a')).toMatchObject({
      payload: undefined,
      sealed: { keyId: 'v1', undecodable: 'authentication-failed' },
    });
  });
});
