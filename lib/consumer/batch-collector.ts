import { isObservable, lastValueFrom } from 'rxjs';
import type { BatchMessage, BatchOptions, MessageContext, QueueBatchHandlerFn, QueueHandlerFn } from '../interfaces';
import { batchMessage, BatchRunContext, type BatchEntry } from './batch-context';

/**
 * Turns a batch handler into the per-message handler a consumer runs: each message waits in
 * the current batch, which is handed to the batch handler once `maxSize` messages are there
 * or `maxWaitMs` after its first; each message's delivery then ends with the batch (acked,
 * or failed with the error given to `fail` or thrown). Every message keeps its own lease,
 * heartbeats and events. At most `concurrency` batch calls run at once; a full batch waits
 * for one to end (its leases kept alive meanwhile).
 */
export function batchingHandler<T>(
  handler: QueueBatchHandlerFn<T>,
  { maxSize, maxWaitMs }: BatchOptions,
  concurrency: number,
): QueueHandlerFn<T> {
  let filling: BatchEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  const waiting: BatchEntry[][] = [];
  let running = 0;

  const start = () => {
    while (running < concurrency && waiting.length > 0) {
      const entries = waiting.shift()!;
      running++;
      void run(entries).finally(() => {
        running--;
        start();
      });
    }
  };
  const close = () => {
    clearTimeout(timer);
    timer = undefined;
    if (filling.length === 0) return;
    waiting.push(filling);
    filling = [];
    start();
  };
  const run = async (entries: BatchEntry[]) => {
    const context = new BatchRunContext(entries);
    try {
      const result = handler(entries.map(batchMessage) as BatchMessage<T>[], context);
      await (isObservable(result) ? lastValueFrom(result, { defaultValue: undefined }) : result);
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      return;
    }
    for (const entry of entries) {
      if (context.failures.has(entry.context.id)) entry.reject(context.failures.get(entry.context.id));
      else entry.resolve();
    }
  };

  return (payload: T, context: MessageContext) =>
    new Promise<void>((resolve, reject) => {
      filling.push({ payload, context, resolve, reject });
      if (filling.length >= maxSize) close();
      else if (filling.length === 1) timer = setTimeout(close, maxWaitMs);
    });
}
