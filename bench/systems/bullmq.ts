import { Queue, Worker } from 'bullmq';
import type { BenchMessage, QueueSystem, SystemFactory } from '../adapter';

/** BullMQ with its defaults, except that finished jobs are deleted. */
export const createBullmq: SystemFactory = async (url, name) => {
  const { port } = new URL(url);
  const connection = { host: '127.0.0.1', port: Number(port), maxRetriesPerRequest: null };
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
  await queue.waitUntilReady();
  const system: QueueSystem = {
    name: 'BullMQ',
    async push(data) {
      await queue.add('job', data);
    },
    async pushBatch(messages, dueAt) {
      // BullMQ takes a delay only: from now, which is no later than the job's own timestamp.
      const now = Date.now();
      await queue.addBulk(
        messages.map((data, i) => ({ name: 'job', data, opts: { delay: dueAt ? Math.max(0, dueAt[i] - now) : 0 } })),
      );
    },
    async startConsumer(concurrency, handler) {
      const worker = new Worker<BenchMessage>(
        name,
        (job) => {
          handler(job.data);
          return Promise.resolve();
        },
        { connection, concurrency },
      );
      worker.on('error', (error) => console.error('BullMQ worker error:', error.message));
      await worker.waitUntilReady();
      return { stop: () => worker.close() };
    },
    close: () => queue.close(),
  };
  return system;
};
