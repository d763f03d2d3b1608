/**
 * pushFlow checks each node's payload against its typed topic (`defineTopic<T>`), at any depth.
 * Each `// @ts-expect-error` line must stay an error (test/unit/types.spec.ts).
 */
import { defineTopic, type Flow, type RedisAckQueueService } from '../../lib';

interface Page {
  book: number;
  page: number;
}
interface Book {
  book: number;
}

const render = defineTopic<Page>('pdf.render');
const merge = defineTopic<Book>('pdf.merge');

export async function flows(queue: RedisAckQueueService, anyFlow: Flow): Promise<void> {
  // Payloads that fit, children built by map, plain topics of any payload, a Flow typed as such.
  await queue.pushFlow({
    topic: merge,
    payload: { book: 7 },
    children: [1, 2].map((page) => ({ topic: render, payload: { book: 7, page } })),
  });
  await queue.pushFlow({
    topic: 'plain',
    payload: 1,
    children: [{ topic: 'x', payload: 'y', options: { delayMs: 1 } }],
  });
  await queue.pushFlow({
    topic: merge,
    payload: { book: 7 },
    children: [
      { topic: render, payload: { book: 7, page: 1 } },
      { topic: 'plain', payload: 5 },
    ],
  });
  await queue.pushFlow(anyFlow);

  // @ts-expect-error the root's payload does not fit its topic
  await queue.pushFlow({ topic: merge, payload: { book: '7' } });
  // @ts-expect-error a child's payload misses a field
  await queue.pushFlow({ topic: merge, payload: { book: 7 }, children: [{ topic: render, payload: { book: 7 } }] });
  await queue.pushFlow({
    topic: merge,
    payload: { book: 7 },
    children: [
      { topic: 'plain', payload: 5 },
      // @ts-expect-error beside a plain sibling too
      { topic: render, payload: { book: 7 } },
    ],
  });
  await queue.pushFlow({
    topic: 'a',
    payload: 1,
    // @ts-expect-error a grandchild's payload
    children: [{ topic: 'b', payload: 2, children: [{ topic: render, payload: 3 }] }],
  });
  await queue.pushFlow({
    topic: merge,
    payload: { book: 7 },
    // @ts-expect-error children built by map, of the wrong shape
    children: [1, 2].map((page) => ({ topic: render, payload: { page } })),
  });
  // @ts-expect-error a flow's node takes no key mode
  await queue.pushFlow({ topic: 'plain', payload: 1, options: { throttle: { key: 'k', windowMs: 1 } } });
}
