import type { FactoryProvider } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { QueueEventExplorer } from './queue-event.explorer';
import { QueueHandlerExplorer } from './queue-handler.explorer';
import { instancesIn } from './queue-registrations';

/** Token of the hook that `RedisAckQueueModule.forLazyModule()` brings into a module. */
export const LAZY_MODULE_HOOK = 'nestjs-redis-ack-queue:lazy-module';

/** What one explorer claimed in a lazily loaded module: started, or let go when the load fails. */
interface Claim {
  start(): Promise<void>;
  release(): void;
}

/**
 * Nest runs no lifecycle hook in a lazily loaded module, but it builds its providers: this
 * one asks every queue's explorers to start the handlers and listeners that arrived since
 * the app bootstrapped, and resolves once they run, so `LazyModuleLoader.load()` resolves
 * with its handlers consuming, or rejects when one is invalid (nothing started then).
 * Before the app bootstraps (an eagerly imported forLazyModule) it does nothing: the
 * bootstrap finds them all.
 */
export const lazyModuleHook: FactoryProvider<true> = {
  provide: LAZY_MODULE_HOOK,
  inject: [ModulesContainer],
  useFactory: async (modules: ModulesContainer): Promise<true> => {
    const claims: Claim[] = [];
    try {
      // Every queue checks the whole app before anything starts.
      for (const explorer of instancesIn<QueueHandlerExplorer>(modules, QueueHandlerExplorer)) {
        const sites = explorer.claimLateHandlers();
        claims.push({ start: () => explorer.startLateHandlers(sites), release: () => explorer.release(sites) });
      }
      for (const explorer of instancesIn<QueueEventExplorer>(modules, QueueEventExplorer)) {
        const sites = explorer.claimLateListeners();
        claims.push({ start: () => explorer.startLateListeners(sites), release: () => explorer.release(sites) });
      }
    } catch (error) {
      for (const claim of claims) claim.release();
      throw error;
    }
    await Promise.all(claims.map((claim) => claim.start()));
    return true;
  },
};
