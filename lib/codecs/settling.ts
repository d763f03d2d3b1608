/** A value now, or a promise of it: a codec answers at once or later, and a sync one costs no promise. */
export type Settling<T> = T | Promise<T>;

/** Whether a codec's answer is a promise (a thenable) rather than bytes. */
export function isPending<T>(value: Settling<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
