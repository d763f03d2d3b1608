import type { BaseRpcContext } from '@nestjs/microservices';

/** Nest's processing start hook: runs `done` (the handling), maybe inside a span of its own. */
export type ProcessingStartHook = (
  transportId: symbol,
  context: BaseRpcContext,
  done: () => Promise<unknown>,
) => unknown;
/** Nest's processing end hook: the handling settled. */
export type ProcessingEndHook = (transportId: symbol, context: BaseRpcContext) => void;

/**
 * Runs `work` between a server's processing start and end hooks, as Nest's own transports do
 * (what instrumentation sets with `setOnProcessingStartHook` / `setOnProcessingEndHook`), and
 * settles with `work`'s outcome whatever the hooks return. `done` runs `work` once; the end
 * hook runs once `work` settles. A Nest without the hooks runs `work` alone.
 */
export function withProcessingHooks<T>(
  hooks: { start: ProcessingStartHook | undefined; end: ProcessingEndHook | undefined },
  transportId: symbol,
  context: BaseRpcContext,
  work: () => Promise<T>,
): Promise<T> {
  const { start, end } = hooks;
  if (typeof start !== 'function') return work();
  return new Promise<T>((resolve, reject) => {
    let running: Promise<T> | undefined;
    const done = (): Promise<T> => {
      if (running) return running;
      running = work().finally(() => end?.(transportId, context));
      running.then(resolve, reject);
      // The hook may drop what `done` returns: its failure reaches the caller through `reject`.
      running.catch(() => undefined);
      return running;
    };
    try {
      const returned: unknown = start(transportId, context, done);
      // Nest's default hook returns done()'s promise: its rejection is already handled above.
      if (returned instanceof Promise) returned.catch(() => undefined);
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what the hook threw, as it is
      if (!running) reject(error);
    }
  });
}
