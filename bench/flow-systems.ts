// The four systems of `npm run bench:flows`: flows of this project (pushFlow) and of BullMQ
// (FlowProducer), and the same messages pushed plain on the same topics by each. A shape is the
// branching of each level below the root: [10] is a parent with 10 children, [3, 3] a root with 3
// children of 3 each. Level i of the tree lives on topic (queue) i; handlers return a small result,
// which a parent reads (context.childResults() / job.getChildrenValues()) and checks.
import { FlowProducer, Queue, Worker, type FlowJob } from 'bullmq';
import { type Flow, type MessageContext, RedisAckQueueService } from '../lib';
import { type BenchMessage, message } from './adapter';

/** Children per node at each level below the root. */
export type FlowShape = number[];

/** Nodes of one level of a shape's tree (level 0 is the root). */
export const levelSize = (shape: FlowShape, level: number): number =>
  shape.slice(0, level).reduce((product, n) => product * n, 1);

/** Nodes of a shape's tree. */
export const nodesOf = (shape: FlowShape): number =>
  Array.from({ length: shape.length + 1 }, (_, level) => levelSize(shape, level)).reduce((sum, n) => sum + n, 0);

/**
 * Called once per handled message; `ok` false for a parent that did not get every child's result.
 */
export type Seen = (ok: boolean) => void;

export interface FlowSystem {
  readonly name: string;
  /** Pushes tree number `seq`: one flow, or its messages plain. */
  push(seq: number): Promise<void>;
  /** Consumers on every level's topic, each at `concurrency`; stop() closes them. */
  startConsumers(concurrency: number, seen: Seen): Promise<{ stop(): Promise<void> }>;
  close(): Promise<void>;
}

export type FlowSystemFactory = (url: string, base: string, shape: FlowShape) => Promise<FlowSystem>;

const topicsOf = (base: string, shape: FlowShape) =>
  Array.from({ length: shape.length + 1 }, (_, i) => `${base}.l${i}`);

/** What a handler returns: the message's sequence number. */
const resultOf = (payload: BenchMessage) => ({ seq: payload.seq });

/** This project's service (no Nest app: the flows API is the service's), a second one consuming. */
async function openService(url: string): Promise<RedisAckQueueService> {
  const queue = new RedisAckQueueService({ connection: url, logLevel: 'error' });
  await queue.connect();
  return queue;
}

async function oursConsumers(url: string, topics: string[], shape: FlowShape, concurrency: number, seen: Seen) {
  const queue = await openService(url);
  topics.forEach((topic, level) => {
    const children = shape[level] ?? 0;
    queue.consume<BenchMessage>(
      topic,
      (payload, context: MessageContext) => {
        if (children === 0) seen(true);
        else {
          const results = Object.values(context.childResults());
          seen(results.reduce((sum, byId) => sum + Object.keys(byId).length, 0) === children);
        }
        return resultOf(payload);
      },
      { concurrency },
    );
  });
  return { stop: () => queue.close() };
}

/** This project: one pushFlow per tree. */
export const oursFlows: FlowSystemFactory = async (url, base, shape) => {
  const topics = topicsOf(base, shape);
  const queue = await openService(url);
  const node = (seq: number, level: number): Flow<BenchMessage> => ({
    topic: topics[level],
    payload: message(seq),
    children: level < shape.length ? Array.from({ length: shape[level] }, () => node(seq, level + 1)) : undefined,
  });
  return {
    name: 'this project, pushFlow',
    async push(seq) {
      await queue.pushFlow(node(seq, 0));
    },
    startConsumers: (concurrency, seen) => oursConsumers(url, topics, shape, concurrency, seen),
    close: () => queue.close(),
  };
};

/** This project: the same messages, one pushMany (or push) per level and tree, no flow. */
export const oursPlain: FlowSystemFactory = async (url, base, shape) => {
  const topics = topicsOf(base, shape);
  const queue = await openService(url);
  return {
    name: 'this project, plain push',
    async push(seq) {
      await Promise.all(
        topics.map((topic, level) => {
          const size = levelSize(shape, level);
          if (size === 1) return queue.push(topic, message(seq));
          return queue.pushMany(
            topic,
            Array.from({ length: size }, () => ({ payload: message(seq) })),
          );
        }),
      );
    },
    // No parents: every handler counts as ok.
    startConsumers: (concurrency, seen) => oursConsumers(url, topics, [], concurrency, seen),
    close: () => queue.close(),
  };
};

const connectionOf = (url: string) => ({
  host: '127.0.0.1',
  port: Number(new URL(url).port),
  maxRetriesPerRequest: null,
});
/** As the main benchmark: finished jobs are deleted. */
const REMOVE = { removeOnComplete: true, removeOnFail: true };

async function bullmqWorkers(url: string, topics: string[], shape: FlowShape, concurrency: number, seen: Seen) {
  const connection = connectionOf(url);
  const workers = topics.map((topic, level) => {
    const children = shape[level] ?? 0;
    const worker = new Worker<BenchMessage>(
      topic,
      async (job) => {
        if (children === 0) seen(true);
        else seen(Object.keys(await job.getChildrenValues()).length === children);
        return resultOf(job.data);
      },
      { connection, concurrency },
    );
    worker.on('error', (error) => console.error('BullMQ worker error:', error.message));
    return worker;
  });
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  return {
    async stop() {
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}

/** BullMQ: one FlowProducer.add per tree. */
export const bullmqFlows: FlowSystemFactory = async (url, base, shape) => {
  const topics = topicsOf(base, shape);
  const producer = new FlowProducer({ connection: connectionOf(url) });
  await producer.waitUntilReady();
  const node = (seq: number, level: number): FlowJob => {
    const job = { name: 'job', queueName: topics[level], data: message(seq), opts: REMOVE };
    if (level === shape.length) return job;
    return { ...job, children: Array.from({ length: shape[level] }, () => node(seq, level + 1)) };
  };
  return {
    name: 'BullMQ, FlowProducer',
    async push(seq) {
      await producer.add(node(seq, 0));
    },
    startConsumers: (concurrency, seen) => bullmqWorkers(url, topics, shape, concurrency, seen),
    close: () => producer.close(),
  };
};

/** BullMQ: the same jobs, one addBulk (or add) per level and tree, no flow. */
export const bullmqPlain: FlowSystemFactory = async (url, base, shape) => {
  const topics = topicsOf(base, shape);
  const connection = connectionOf(url);
  const queues = topics.map((topic) => new Queue(topic, { connection, defaultJobOptions: REMOVE }));
  await Promise.all(queues.map((queue) => queue.waitUntilReady()));
  return {
    name: 'BullMQ, plain add',
    async push(seq) {
      await Promise.all(
        queues.map((queue, level) => {
          const size = levelSize(shape, level);
          if (size === 1) return queue.add('job', message(seq));
          return queue.addBulk(Array.from({ length: size }, () => ({ name: 'job', data: message(seq) })));
        }),
      );
    },
    startConsumers: (concurrency, seen) => bullmqWorkers(url, topics, [], concurrency, seen),
    async close() {
      await Promise.all(queues.map((queue) => queue.close()));
    },
  };
};
