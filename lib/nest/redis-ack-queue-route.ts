import { SetMetadata, type ExecutionContext } from '@nestjs/common';
import { REDIS_ACK_QUEUE_ROUTE, type RedisAckQueueRoute } from '../common/redis-ack-queue.constants';

/** Marks a controller of this library, so that an app-wide guard can tell it from the app's own. */
export const RedisAckQueueRouteOf = (route: RedisAckQueueRoute): ClassDecorator =>
  SetMetadata(REDIS_ACK_QUEUE_ROUTE, route);

/**
 * Whether the request goes to a controller of this library (`route` given: to that one). An app-wide
 * guard (`APP_GUARD`) runs before every controller's own guards, the library's included: let these
 * through, and the dashboard still runs the guard given to `RedisAckQueueDashboardModule.register`,
 * while the metrics route answers whoever the app lets reach it (Prometheus has no login).
 * @example
 * ```ts
 * canActivate(context: ExecutionContext) {
 *   if (context.getType() !== 'http' || isRedisAckQueueRoute(context)) return true;
 *   return isSignedIn(context.switchToHttp().getRequest());
 * }
 * ```
 */
export function isRedisAckQueueRoute(context: ExecutionContext, route?: RedisAckQueueRoute): boolean {
  const target = context.getClass() as object | undefined;
  if (target === undefined) return false;
  const marked = Reflect.getMetadata(REDIS_ACK_QUEUE_ROUTE, target) as RedisAckQueueRoute | undefined;
  return marked !== undefined && (route === undefined || marked === route);
}
