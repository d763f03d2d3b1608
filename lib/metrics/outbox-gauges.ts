import type { Logger } from '@nestjs/common';
import type * as PromClient from 'prom-client';
import type { Gauge, Registry } from 'prom-client';
import type { OutboxStatus } from '../interfaces';
import type { RedisAckQueueService } from '../service/redis-ack-queue.service';
import { MESSAGES } from '../common/redis-ack-queue.messages';
import { withinBound } from '../engine/redis/call-bound';

/** The outbox's gauges: each read from the one `outboxStatus()` of the scrape. */
const OUTBOX_GAUGES: readonly (readonly [name: string, help: string, value: (status: OutboxStatus) => number])[] = [
  [
    'redis_ack_queue_outbox_depth',
    'Committed outbox rows waiting to be relayed (dead ones not counted), read from PostgreSQL at scrape time',
    (status) => status.depth,
  ],
  [
    'redis_ack_queue_outbox_oldest_age_seconds',
    'How long the oldest waiting outbox row has waited since its insert (0 when none waits)',
    (status) => status.oldestAgeMs / 1000,
  ],
  [
    'redis_ack_queue_outbox_dead',
    'Outbox rows that can never be pushed, kept until requeued or purged (outboxDead)',
    (status) => status.dead,
  ],
  ['redis_ack_queue_outbox_relays', 'Outbox relays that reported in the last 15 s', (status) => status.relays.length],
  [
    'redis_ack_queue_outbox_relay_lag_seconds',
    "The largest lag of the listed relays: how long their last batch's oldest row waited, from its insert to its push (0 without relays)",
    (status) => Math.max(0, ...status.relays.map((relay) => relay.lagMs)) / 1000,
  ],
];

/** The names of the outbox's gauges (registered only for a service with the option `outbox`). */
export const OUTBOX_GAUGE_NAMES = OUTBOX_GAUGES.map(([name]) => name);

/**
 * The outbox's gauges of a service with the option `outbox`: no labels (one outbox per service,
 * as the other metrics carry no queue label either), read with one `outboxStatus()` per scrape
 * bounded by `scrapeTimeoutMs`. A failed read (PostgreSQL down) is logged and leaves these
 * gauges without a sample for that scrape; the other metrics are served as usual.
 */
export class OutboxGauges {
  /** The read of the scrape under way, shared by every gauge's collect. */
  private reading: Promise<OutboxStatus | undefined> | undefined;

  constructor(
    prom: typeof PromClient,
    registry: Registry,
    private readonly service: RedisAckQueueService,
    private readonly boundMs: number,
    private readonly logger: Logger,
  ) {
    for (const [name, help, value] of OUTBOX_GAUGES) {
      const gauge: Gauge = new prom.Gauge({
        name,
        help,
        registers: [registry],
        collect: async () => {
          const status = await this.read();
          gauge.reset();
          // An unlabelled gauge keeps a 0 after reset: removed, no sample says the read failed.
          if (status) gauge.set(value(status));
          else gauge.remove();
        },
      });
    }
  }

  private read(): Promise<OutboxStatus | undefined> {
    this.reading ??= this.readOnce().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async readOnce(): Promise<OutboxStatus | undefined> {
    try {
      return await withinBound(
        this.service.outboxStatus(),
        this.boundMs,
        'read the outbox status',
        undefined,
        'the scrapeTimeoutMs',
      );
    } catch (error) {
      this.logger.warn(MESSAGES.outboxGaugesFailed((error as Error).message));
      return undefined;
    }
  }
}
