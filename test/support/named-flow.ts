import { filter, firstValueFrom } from 'rxjs';
import type { ChildResults, RedisAckQueueService } from '../../lib';
import { expectLogs } from './capture-logs';

/** Names that are keys of every plain object already: as topics, ids or step names, each must be one like any other. */
export const OBJECT_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

/** A flow whose names come from users: where its children live, what they are called, what the parent does. */
export interface NamedFlow {
  /** The parent's topic (its id is `parent`). */
  topic: string;
  /** Topics with one child each, id `child`. */
  childTopics: string[];
  /** The topic of the children named by `childIds`. */
  kidsTopic: string;
  childIds: string[];
  /** The durable steps the parent runs, each returning `step <name>`. */
  steps: string[];
  /** What the parent fails with, for good (maxAttempts 1). */
  error: string;
}

/**
 * Runs a NamedFlow: each child returns `<topic>/<id>`; the parent runs its steps, reads its
 * children's results and dies with `error`, keeping steps and children as a dead letter.
 * Resolves with what `childResults()` gave the parent, once its dead letter is stored.
 */
export async function runNamedFlow(queue: RedisAckQueueService, flow: NamedFlow): Promise<ChildResults> {
  const { topic, childTopics, kidsTopic, childIds, steps, error } = flow;
  let results: ChildResults | undefined;
  expectLogs(/went to the dead letters as failed on attempt 1/);
  const died = firstValueFrom(queue.events$.pipe(filter((e) => e.type === 'dead' && e.topic === topic)));
  await queue.pushFlow({
    topic,
    id: 'parent',
    payload: {},
    options: { maxAttempts: 1 },
    children: [
      ...childTopics.map((child) => ({ topic: child, id: 'child', payload: {} })),
      ...childIds.map((id) => ({ topic: kidsTopic, id, payload: {} })),
    ],
  });
  const consumers = [...new Set([...childTopics, kidsTopic])].map((child) =>
    queue.consume(child, (_payload: unknown, context) => `${context.topic}/${context.id}`),
  );
  consumers.push(
    queue.consume(topic, async (_payload: unknown, context) => {
      for (const name of steps) await context.step(name, () => `step ${name}`);
      results = context.childResults();
      throw new Error(error);
    }),
  );
  await died;
  await Promise.all(consumers.map((consumer) => consumer.close()));
  return results!;
}
