import { BadRequestException, Controller, Get, Header, NotFoundException, Param, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InvalidTopicError } from '../../errors';
import type { ScalingReport } from '../../interfaces';
import { RedisAckQueueService } from '../../service/redis-ack-queue.service';
import { RedisAckQueueRouteOf } from '../redis-ack-queue-route';

/**
 * A controller that answers GET `<path>/:topic` with the topic's ScalingReport as JSON: what
 * KEDA's `metrics-api` scaler reads (`valueLocation: desiredConsumers`). A topic without a scaling
 * target answers 404, a name that is no topic's 400, each with a JSON error.
 */
export function scalingController(path: string): Type<unknown> {
  class RedisAckQueueScalingController {
    constructor(readonly moduleRef: ModuleRef) {}

    async scaling(topic: string): Promise<ScalingReport> {
      const service = this.moduleRef.get(RedisAckQueueService, { strict: false });
      let report: ScalingReport | null;
      try {
        report = await service.scaling(topic);
      } catch (error) {
        // The message names no topic: the path is the caller's text.
        if (error instanceof InvalidTopicError) throw new BadRequestException('Not a topic name');
        throw error;
      }
      if (!report) throw new NotFoundException('The topic has no scaling target (setScalingTarget)');
      return report;
    }
  }
  Reflect.defineMetadata('design:paramtypes', [ModuleRef], RedisAckQueueScalingController);
  const prototype = RedisAckQueueScalingController.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(prototype, 'scaling')!;
  Get(`${path.replace(/\/+$/, '')}/:topic`)(prototype, 'scaling', descriptor);
  Header('Cache-Control', 'no-store')(prototype, 'scaling', descriptor);
  Param('topic')(prototype, 'scaling', 0);
  Controller()(RedisAckQueueScalingController);
  RedisAckQueueRouteOf('scaling')(RedisAckQueueScalingController);
  return RedisAckQueueScalingController;
}
