import { Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InvalidOptionError } from '../errors';
import { getQueueToken } from '../nest/queue-tokens';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { DashboardActions } from './dashboard-actions';
import { DashboardBulk } from './dashboard-bulk';
import { dashboardController } from './dashboard-controller.factory';
import type { RedisAckQueueDashboardOptions } from './dashboard-options.interface';
import { DashboardPage } from './dashboard-page';
import { DashboardReads } from './dashboard-reads';
import { DASHBOARD, type Dashboard } from './dashboard';

const OPTIONS = 'nestjs-redis-ack-queue:dashboard-options';
const PATH = /^\/?[A-Za-z0-9_~-][A-Za-z0-9._~-]*(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*$/;

/**
 * A dashboard page for operators, served by the app (Express or Fastify) at `path`: every
 * topic with its counts, lag and pause state; each topic's messages by state, dead letters
 * and schedules; requeue, purge, cancel, pause, resume and run-now, guarded against
 * cross-site requests and confirmed first. Behind the guard you give (`open: true` serves it
 * without one). Import it next to `RedisAckQueueModule`.
 * @example
 * ```ts
 * imports: [RedisAckQueueModule.forRoot({}), RedisAckQueueDashboardModule.register({ guard: AdminGuard })]
 * ```
 */
@Module({})
export class RedisAckQueueDashboardModule implements OnModuleInit {
  /** @internal */
  constructor(private readonly moduleRef: ModuleRef) {}

  /**
   * The dashboard's module.
   * @throws {InvalidOptionError} when there is no guard and `open` is not true, or `path`,
   *   `refreshMs`, `readOnly`, `open`, `revealSealedPayloads` or `queue` has a bad value (an unregistered `queue` fails
   *   the app's startup).
   */
  static register(options: RedisAckQueueDashboardOptions): DynamicModule {
    const {
      path = '/queues',
      guard,
      open = false,
      readOnly = false,
      refreshMs = 2_000,
      queue,
      revealSealedPayloads = false,
      imports = [],
    } = options ?? {};
    const guards = guard === undefined ? [] : Array.isArray(guard) ? guard : [guard];
    if (typeof open !== 'boolean') throw new InvalidOptionError('open', open, 'true or false');
    if (guards.length === 0 && !open) {
      throw new InvalidOptionError(
        'guard',
        guard,
        'a guard (or guards), or open: true to serve the dashboard unguarded',
      );
    }
    if (typeof path !== 'string' || !PATH.test(path))
      throw new InvalidOptionError('path', path, 'a URL path like /queues');
    if (queue !== undefined && (typeof queue !== 'string' || queue === '')) {
      throw new InvalidOptionError('queue', queue, 'the name of a registered queue');
    }
    if (typeof readOnly !== 'boolean') throw new InvalidOptionError('readOnly', readOnly, 'true or false');
    if (typeof revealSealedPayloads !== 'boolean')
      throw new InvalidOptionError('revealSealedPayloads', revealSealedPayloads, 'true or false');
    if (!Number.isInteger(refreshMs) || refreshMs < 500 || refreshMs > 60_000) {
      throw new InvalidOptionError('refreshMs', refreshMs, 'a whole number of ms from 500 to 60,000');
    }
    const dashboard: Partial<Dashboard> = { page: new DashboardPage(), settings: { refreshMs, readOnly } };
    return {
      module: RedisAckQueueDashboardModule,
      imports,
      controllers: [dashboardController(path, guards)],
      providers: [
        { provide: DASHBOARD, useValue: dashboard },
        { provide: OPTIONS, useValue: { queue, readOnly, revealSealedPayloads } },
      ],
    };
  }

  /** Finds the queue's service, which need not be global: every provider exists by now. */
  onModuleInit(): void {
    const { queue, readOnly, revealSealedPayloads } = this.moduleRef.get<{
      queue?: string;
      readOnly: boolean;
      revealSealedPayloads: boolean;
    }>(OPTIONS);
    let service: RedisAckQueueService;
    try {
      service = this.moduleRef.get<RedisAckQueueService>(getQueueToken(queue), { strict: false });
    } catch {
      throw new InvalidOptionError('queue', queue, 'the name of a queue that RedisAckQueueModule registers');
    }
    const dashboard = this.moduleRef.get<Dashboard>(DASHBOARD);
    dashboard.reads = new DashboardReads(service, revealSealedPayloads);
    dashboard.actions = new DashboardActions(service, readOnly);
    dashboard.bulk = new DashboardBulk(service, readOnly);
  }
}
