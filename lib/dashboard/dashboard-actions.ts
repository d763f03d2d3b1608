import type { MessageState, PushResult } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { notFound, readOnly } from './dashboard-errors';

/** What an operator can do from the dashboard; each action is one call of the service's API. */
export class DashboardActions {
  constructor(
    private readonly queue: RedisAckQueueService,
    private readonly readOnly: boolean,
  ) {}

  /** Requeues the given dead letters, or all of them (`ids` undefined). */
  async requeue(topic: string, ids: string[] | undefined): Promise<{ requeued: number }> {
    this.assertWritable();
    return { requeued: await this.queue.requeueDead(topic, ids) };
  }

  /** Deletes the given dead letters for good, or all of them (`ids` undefined). */
  async purge(topic: string, ids: string[] | undefined): Promise<{ purged: number }> {
    this.assertWritable();
    return { purged: await this.queue.purgeDead(topic, ids) };
  }

  /** Gives the given dead outbox rows, or all of them (`rowIds` undefined), back to the relay. */
  async requeueOutbox(rowIds: string[] | undefined): Promise<{ requeued: number }> {
    this.assertWritable();
    return { requeued: await this.queue.requeueOutboxDead(rowIds) };
  }

  /** Deletes the given dead outbox rows for good, or all of them (`rowIds` undefined). */
  async purgeOutbox(rowIds: string[] | undefined): Promise<{ purged: number }> {
    this.assertWritable();
    return { purged: await this.queue.purgeOutboxDead(rowIds) };
  }

  async cancel(topic: string, id: string): Promise<{ cancelled: MessageState }> {
    this.assertWritable();
    const state = await this.queue.cancel(topic, id);
    if (!state) throw notFound(`message ${id} in ${topic}`);
    return { cancelled: state };
  }

  async setPaused(topic: string, paused: boolean): Promise<{ paused: boolean }> {
    this.assertWritable();
    await (paused ? this.queue.pause(topic) : this.queue.resume(topic));
    return { paused };
  }

  async runSchedule(topic: string, name: string): Promise<PushResult> {
    this.assertWritable();
    const pushed = await this.queue.runScheduleNow(topic, name);
    if (!pushed) throw notFound(`schedule ${name} on ${topic}`);
    return pushed;
  }

  /** Deletes a schedule; one the app's module still declares comes back at its next startup. */
  async removeSchedule(topic: string, name: string): Promise<{ removed: true }> {
    this.assertWritable();
    if (!(await this.queue.removeSchedule(topic, name))) throw notFound(`schedule ${name} on ${topic}`);
    return { removed: true };
  }

  private assertWritable(): void {
    if (this.readOnly) throw readOnly();
  }
}
