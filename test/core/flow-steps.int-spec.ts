import type { MessageContext } from '../../lib';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

/** Durable steps inside flows: a parent that fails after a step resumes from it, with its children's results. */
describe('flows with durable steps', () => {
  const fx = useRedis();

  it('runs a parent step once across its retries, and a child step once across the child retries', async () => {
    const [parent, child] = [uniqueTopic('parent'), uniqueTopic('child')];
    const queue = await fx.service();
    const ran: string[] = [];
    const seen: unknown[] = [];
    queue.consume(
      child,
      async (payload: number, context: MessageContext) => {
        const doubled = await context.step('double', () => {
          ran.push(`double:${context.id}`);
          return payload * 2;
        });
        if (context.attempt === 1) throw new Error('child fails once after its step');
        return doubled;
      },
      { backoff: () => 10 },
    );
    queue.consume(
      parent,
      async (_payload: unknown, context: MessageContext) => {
        const results = context.childResults();
        seen.push(results);
        const total = await context.step('sum', () => {
          ran.push('sum');
          return Object.values(results[child]).reduce((sum: number, value) => sum + (value as number), 0);
        });
        if (context.attempt < 3) throw new Error('parent fails twice after its step');
        return total;
      },
      { backoff: () => 10 },
    );
    await queue.pushFlow({
      topic: parent,
      id: 'p',
      payload: null,
      children: [1, 2, 3].map((n) => ({ topic: child, id: `c${n}`, payload: n })),
    });
    await eventually(async () => (await queue.get(parent, 'p')) === null && seen.length === 3, 20_000);
    expect(ran.filter((name) => name === 'sum')).toHaveLength(1);
    expect(ran.filter((name) => name.startsWith('double:')).sort()).toEqual(['double:c1', 'double:c2', 'double:c3']);
    // Every delivery of the parent saw every child's result (the results stay through its retries).
    for (const results of seen) expect(results).toEqual({ [child]: { c1: 2, c2: 4, c3: 6 } });
  });
});
