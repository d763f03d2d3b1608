import type { InstanceWrapper } from './nest-internals';

/** Handler instances that an explorer of their app found: each app that imports the module marks its own. */
const found = new WeakSet<object>();

/**
 * Marks the built instances of these `@QueueHandler` providers (a transient one's every
 * instance) as found by a registration's explorer, consuming or not (`consumers: false`).
 */
export function markFoundHandlers(sites: readonly { wrapper: InstanceWrapper }[]): void {
  for (const { wrapper } of sites) {
    const instances: unknown[] = wrapper.isTransient
      ? wrapper.getStaticTransientInstances().map((host): unknown => host?.instance)
      : [wrapper.instance as unknown];
    for (const instance of instances) if (typeof instance === 'object' && instance !== null) found.add(instance);
  }
}

/** Whether an explorer of this instance's app found it. */
export function isFoundHandler(instance: object): boolean {
  return found.has(instance);
}
