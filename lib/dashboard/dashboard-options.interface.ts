import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';

/** A guard as `@UseGuards()` takes it: a class (made by Nest, with its dependencies) or an instance. */
export type DashboardGuard = Type<CanActivate> | CanActivate;

/** Options of {@link RedisAckQueueDashboardModule.register}. */
export interface RedisAckQueueDashboardOptions {
  /**
   * Where the page is served in the app (its API and assets below it). An app's global
   * prefix applies as to any controller.
   * @defaultValue `'/queues'`
   */
  path?: string;
  /**
   * The guard (or guards) every route of the dashboard goes through: the page, its assets and
   * its API, reads and actions alike. Required unless `open` is true. An app-wide guard
   * (`APP_GUARD`) runs before it: let the dashboard through there with `isRedisAckQueueRoute(context)`.
   */
  guard?: DashboardGuard | DashboardGuard[];
  /**
   * Serve the dashboard with no guard, to anyone who can reach the app: only for an app that
   * only operators can reach. Without a guard and without `open: true`, `register` throws.
   * @defaultValue `false`
   */
  open?: boolean;
  /**
   * Show every page but refuse every action (requeue, purge, cancel, pause, resume, run now).
   * @defaultValue `false`
   */
  readOnly?: boolean;
  /**
   * The named queue to show (`RedisAckQueueModule.forRoot({ name })`).
   * @defaultValue the default queue
   */
  queue?: string;
  /**
   * How often the page refreshes what it shows (ms, 500 to 60,000).
   * @defaultValue `2_000`
   */
  refreshMs?: number;
  /**
   * Show payloads, headers and results that a codec sealed (see docs/codecs.md), opened, to
   * those the guard lets in, when this app's queue has the codec and key to open them. Off: the
   * dashboard shows each sealed value as `encrypted`, with its size and key id, and never sends
   * it opened to the browser. Values stored without a codec are shown either way.
   * @defaultValue `false`
   */
  revealSealedPayloads?: boolean;
  /** Modules that provide what a guard class depends on, when they are not global. */
  imports?: ModuleMetadata['imports'];
}
