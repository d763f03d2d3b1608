import type { RedisAckQueueService } from '../../lib';
import { OBJECT_NAMES, runNamedFlow } from '../support/named-flow';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

/** An object's own entries, sorted: what a plain object would lose (`__proto__`) shows as missing. */
const sorted = <T>(entries: [string, T][]) => entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const entriesOf = <T>(record: Readonly<Record<string, T>> | undefined) => sorted(Object.entries(record ?? {}));

/**
 * Topics, ids, step names and group names are chosen by users: where they become keys of an
 * answer, `__proto__`, `constructor`, `toString` and `hasOwnProperty` are keys like any other, and
 * nothing reaches Object.prototype.
 */
describe('names that are keys of every object', () => {
  const fx = useRedis();
  let queue: RedisAckQueueService;

  beforeAll(async () => {
    queue = await fx.service();
  });

  it("a flow's children and a message's steps named so are all there, and Object.prototype is untouched", async () => {
    const before = Object.getOwnPropertyNames(Object.prototype);
    const [topic, kidsTopic] = [uniqueTopic('parent'), uniqueTopic('kids')];
    const results = await runNamedFlow(queue, {
      topic,
      childTopics: OBJECT_NAMES,
      kidsTopic,
      childIds: OBJECT_NAMES,
      steps: OBJECT_NAMES,
      error: 'fails after its steps',
    });

    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(before);
    expect(({} as Record<string, unknown>).child).toBeUndefined();
    // By child topic, then child id, each in an object without a prototype.
    expect(Object.getPrototypeOf(results)).toBeNull();
    expect(entriesOf(results).map(([name, byId]) => [name, entriesOf(byId)])).toEqual(
      sorted([
        ...OBJECT_NAMES.map((name): [string, [string, string][]] => [name, [['child', `${name}/child`]]]),
        [kidsTopic, sorted(OBJECT_NAMES.map((id): [string, string] => [id, `${kidsTopic}/${id}`]))],
      ]),
    );

    const parent = await queue.get(topic, 'parent');
    expect(parent?.state).toBe('dead');
    expect(entriesOf(parent?.steps)).toEqual(sorted(OBJECT_NAMES.map((name) => [name, `step ${name}`])));
    expect(parent?.children?.map(({ topic: t, id }) => `${t} ${id}`).sort()).toEqual(
      [...OBJECT_NAMES.map((name) => `${name} child`), ...OBJECT_NAMES.map((id) => `${kidsTopic} ${id}`)].sort(),
    );
  });

  it('group weights of groups named so are all read back', async () => {
    const topic = uniqueTopic('weights');
    const weights = Object.fromEntries(OBJECT_NAMES.map((name, i) => [name, i + 2]));
    await queue.setGroupWeights(topic, weights);
    const read = await queue.groupWeights(topic);
    expect(entriesOf(read)).toEqual(entriesOf(weights));
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('2');
  });
});
