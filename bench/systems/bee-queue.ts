import BeeQueue from 'bee-queue';
import type { BenchMessage, QueueSystem, SystemFactory } from '../adapter';

/**
 * bee-queue with its defaults, except that finished jobs are deleted, the worker
 * activates delayed jobs, and it runs the stalled-job check its README asks workers to run.
 */
export const createBeeQueue: SystemFactory = async (url, name) => {
  const { port } = new URL(url);
  const redis = { host: '127.0.0.1', port: Number(port) };
  const settings = { redis, removeOnSuccess: true, removeOnFailure: true };
  const producer = new BeeQueue<BenchMessage>(name, { ...settings, isWorker: false });
  await producer.ready();
  const system: QueueSystem = {
    name: 'bee-queue',
    async push(data) {
      await producer.createJob(data).save();
    },
    async pushBatch(messages, dueAt) {
      const jobs = messages.map((data, i) => {
        const job = producer.createJob(data);
        return dueAt ? job.delayUntil(dueAt[i]) : job;
      });
      const errors = await producer.saveAll(jobs);
      if (errors.size > 0) throw [...errors.values()][0];
    },
    async startConsumer(concurrency, handler) {
      const worker = new BeeQueue<BenchMessage>(name, { ...settings, activateDelayedJobs: true });
      worker.on('error', (error) => console.error('bee-queue worker error:', error.message));
      await worker.ready();
      worker.process(concurrency, (job) => {
        handler(job.data);
        return Promise.resolve();
      });
      const stalledCheck = worker.checkStalledJobs(5_000).catch(() => 0);
      return {
        async stop() {
          await stalledCheck;
          await worker.close(10_000);
        },
      };
    },
    close: () => producer.close(10_000),
  };
  return system;
};
