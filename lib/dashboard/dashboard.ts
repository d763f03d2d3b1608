import type { DashboardActions } from './dashboard-actions';
import type { DashboardBulk } from './dashboard-bulk';
import type { DashboardPage } from './dashboard-page';
import type { DashboardReads } from './dashboard-reads';

/** Injection token of the dashboard's parts (module-private). */
export const DASHBOARD = 'nestjs-redis-ack-queue:dashboard';

/**
 * What the controller serves: made once the app's queue service exists (at module init),
 * filled in place so the controller, made before, sees it.
 */
export interface Dashboard {
  page: DashboardPage;
  reads: DashboardReads;
  actions: DashboardActions;
  bulk: DashboardBulk;
  settings: { refreshMs: number; readOnly: boolean };
}
