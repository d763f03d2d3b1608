import Redis from 'ioredis';
import type { BenchHandler, BenchMessage, QueueSystem, RunningConsumer, SystemFactory } from '../adapter';

/** How long a lane's BRPOP blocks before it looks at the stop flag again (seconds). */
const POLL_SECONDS = 0.1;

/**
 * A raw Redis list, the floor under every queue here: push is one LPUSH per body (the same JSON
 * bodies), pipelined per batch; consume is BRPOP on `concurrency` lanes sharing one connection.
 * No ack, no lease, no retry, no dead letter: a message a crashed consumer popped is lost.
 * It is a reference for what Redis and the network allow, not a queue to compare features with.
 */
export const createRawList: SystemFactory = async (url, name) => {
  const producer = new Redis(url, { lazyConnect: true });
  await producer.connect();
  const key = `raw:${name}`;
  const system: QueueSystem = {
    name: 'raw list (floor)',
    async push(data) {
      await producer.lpush(key, JSON.stringify(data));
    },
    async pushBatch(messages, dueAt) {
      if (dueAt) throw new Error('a raw list has no delayed messages');
      const pipeline = producer.pipeline();
      for (const data of messages) pipeline.lpush(key, JSON.stringify(data));
      const replies = (await pipeline.exec()) ?? [];
      const failed = replies.find(([error]) => error)?.[0];
      if (failed) throw failed;
    },
    startConsumer: (concurrency, handler) => consume(url, key, concurrency, handler),
    close: async () => {
      await producer.quit();
    },
  };
  return system;
};

/** `concurrency` loops of BRPOP (each waits for its handler) on one connection of their own. */
async function consume(url: string, key: string, concurrency: number, handler: BenchHandler): Promise<RunningConsumer> {
  const client = new Redis(url, { lazyConnect: true });
  await client.connect();
  let stopped = false;
  const lane = async () => {
    while (!stopped) {
      const popped = await client.brpop(key, POLL_SECONDS);
      if (popped) handler(JSON.parse(popped[1]) as BenchMessage);
    }
  };
  const lanes = Array.from({ length: concurrency }, lane);
  return {
    async stop() {
      stopped = true;
      // The lanes' BRPOPs queue on one connection: closing it ends them at once.
      client.disconnect();
      await Promise.allSettled(lanes);
    },
  };
}
