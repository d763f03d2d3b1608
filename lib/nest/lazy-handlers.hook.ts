import type { FactoryProvider } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { QueueHandlerExplorer } from './queue-handler.explorer';
import type { HandlerSite } from './queue-handler.finder';
import { instancesIn } from './queue-registrations';

/** Token of the hook that `RedisAckQueueModule.forFeature()` brings into a module. */
export const LAZY_HANDLERS_HOOK = 'nestjs-redis-ack-queue:lazy-handlers';

/**
 * Nest runs no lifecycle hook in a lazily loaded module, but it builds its providers: this
 * one asks every queue's explorer to start the handlers that arrived since the app
 * bootstrapped, and resolves once they run, so `LazyModuleLoader.load()` resolves with its
 * handlers consuming, or rejects when one is invalid (nothing started then). Before the app
 * bootstraps (an eagerly imported forFeature) it does nothing: the bootstrap finds them all.
 */
export const lazyHandlersHook: FactoryProvider<true> = {
  provide: LAZY_HANDLERS_HOOK,
  inject: [ModulesContainer],
  useFactory: async (modules: ModulesContainer): Promise<true> => {
    const claims: [QueueHandlerExplorer, HandlerSite[]][] = [];
    try {
      // Every queue checks the whole app before any handler starts.
      for (const explorer of instancesIn<QueueHandlerExplorer>(modules, QueueHandlerExplorer)) {
        claims.push([explorer, explorer.claimLateHandlers()]);
      }
    } catch (error) {
      for (const [explorer, sites] of claims) explorer.release(sites);
      throw error;
    }
    await Promise.all(claims.map(([explorer, sites]) => explorer.startLateHandlers(sites)));
    return true;
  },
};
