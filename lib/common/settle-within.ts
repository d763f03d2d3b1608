/**
 * Resolves when `promise` settles (either way), after `ms`, or when `stop` aborts, whichever
 * comes first; leaves no timer or listener behind.
 */
export function settleWithin(promise: Promise<unknown> | undefined, ms: number, stop?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (stop?.aborted) return done();
    stop?.addEventListener('abort', done);
    promise?.then(done, done);
  });
}
