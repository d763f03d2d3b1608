import type { BulkRequest, BulkRunner } from '../common/bulk-request';
import type { BulkStarted, BulkStatus } from '../interfaces';
import { notFound, readOnly } from './dashboard-errors';

/**
 * Bulk actions from the dashboard: what one would select (counted first, for its confirmation),
 * starting one, where one stands, aborting one. Each is one call of the service's API.
 */
export class DashboardBulk {
  constructor(
    private readonly queue: BulkRunner,
    private readonly readOnly: boolean,
  ) {}

  /** How many messages the action would select now; changes nothing (read-only dashboards answer it too). */
  async count(topic: string, request: BulkRequest): Promise<{ selected: number }> {
    const { state, ...filter } = request.filter;
    return { selected: await this.queue.count(topic, state, filter) };
  }

  /** Starts the action: it selects its messages now and runs on in the background. */
  start(topic: string, request: BulkRequest): Promise<BulkStarted> {
    if (this.readOnly) throw readOnly();
    return this.queue.bulk(topic, request);
  }

  /** Where a bulk action stands; a 404 when no bulk action has this id (or its record expired). */
  async status(id: string): Promise<BulkStatus> {
    const status = await this.queue.bulkStatus(id);
    if (!status) throw notFound(`bulk action ${id}`);
    return status;
  }

  /** Stops a running bulk action: `aborted` is false when it was not running (done, aborted, or unknown). */
  async abort(id: string): Promise<{ aborted: boolean }> {
    if (this.readOnly) throw readOnly();
    return { aborted: await this.queue.abortBulk(id) };
  }
}
