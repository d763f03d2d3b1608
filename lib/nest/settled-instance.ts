import type { ModulesContainer } from '@nestjs/core';
import { type InstanceWrapper, STATIC_CONTEXT } from './nest-internals';
import { isBuiltOnce } from './request-scope.binder';

/** How often to look again at a provider whose creation has not begun (a controller waits for its module's providers). */
const POLL_MS = 10;

/**
 * Resolves true once a provider's instance exists, false when it never will (its creation
 * failed, or its module was removed after a failed lazy load). A handler found while its
 * module is still being built (loaded lazily) must be bound to the instance, not to the
 * prototype Nest holds in its place meanwhile. Providers built per message: true at once.
 */
async function settledInstance(wrapper: InstanceWrapper, modules: ModulesContainer): Promise<boolean> {
  if (!isBuiltOnce(wrapper)) return true;
  let awaited: Promise<unknown> | undefined;
  for (;;) {
    const host = wrapper.getInstanceByContextId(STATIC_CONTEXT);
    if (host.isResolved) return host.instance !== null && host.instance !== undefined;
    // Being built: Nest settles donePromise when it is done (with the error when it failed).
    if (host.donePromise && host.donePromise !== awaited) {
      awaited = host.donePromise;
      await awaited;
      continue;
    }
    if (!wrapper.host || modules.get(wrapper.host.token) !== wrapper.host) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Starts the methods a lazily loaded module brought, once their providers are built: those
 * whose provider failed are let go (the failure fails the load by itself), and all of them
 * when starting fails.
 */
export async function startWhenBuilt<S extends { wrapper: InstanceWrapper }>(
  sites: S[],
  modules: ModulesContainer,
  release: (sites: S[]) => void,
  start: (sites: S[]) => unknown,
): Promise<void> {
  try {
    const built = await Promise.all(sites.map(({ wrapper }) => settledInstance(wrapper, modules)));
    release(sites.filter((_, i) => !built[i]));
    await start(sites.filter((_, i) => built[i]));
  } catch (error) {
    release(sites);
    throw error;
  }
}
