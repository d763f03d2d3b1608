import { Controller, Get, Header, Injectable, type Type } from '@nestjs/common';
import type { RedisAckQueueMetrics } from '../../metrics/queue-metrics';
import { RedisAckQueueRouteOf } from '../redis-ack-queue-route';

/** The metrics of the module, made at module init (once the queue service exists). */
@Injectable()
export class MetricsHolder {
  metrics: RedisAckQueueMetrics | undefined;
}

/** A controller that answers GET `path` with the registry's text exposition (path given at forRoot). */
export function metricsController(path: string, contentType: string): Type<unknown> {
  class RedisAckQueueMetricsController {
    constructor(readonly holder: MetricsHolder) {}

    scrape(): Promise<string> {
      return this.holder.metrics!.registry.metrics();
    }
  }
  Reflect.defineMetadata('design:paramtypes', [MetricsHolder], RedisAckQueueMetricsController);
  const prototype = RedisAckQueueMetricsController.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(prototype, 'scrape')!;
  Get(path)(prototype, 'scrape', descriptor);
  Header('Content-Type', contentType)(prototype, 'scrape', descriptor);
  Header('Cache-Control', 'no-store')(prototype, 'scrape', descriptor);
  Controller()(RedisAckQueueMetricsController);
  RedisAckQueueRouteOf('metrics')(RedisAckQueueMetricsController);
  return RedisAckQueueMetricsController;
}
