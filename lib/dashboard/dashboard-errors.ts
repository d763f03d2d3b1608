import { HttpException } from '@nestjs/common';
import { RedisAckQueueError } from '../errors';

/** An error as the page shows it: the library's stable code and its message (never a payload). */
export interface ErrorView {
  code: string;
  message: string;
}

/** A request the dashboard refuses before it reaches the queue: its HTTP status and why. */
export class DashboardRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'DashboardRequestError';
  }
}

/** A 404: the message (or schedule) the request names is not there. */
export const notFound = (what: string) => new DashboardRequestError(404, 'NOT_FOUND', `no ${what}`);

/** A 403: this dashboard is read-only and the request would change something. */
export const readOnly = () => new DashboardRequestError(403, 'READ_ONLY', 'this dashboard is read-only');

/** The HTTP status of each error code the queue raises for a dashboard request. */
const STATUS_OF_CODE: Record<string, number> = {
  INVALID_TOPIC: 400,
  INVALID_MESSAGE_ID: 400,
  INVALID_OPTION: 400,
  INVALID_SCHEDULE: 400,
  PARTITION_COUNT_MISMATCH: 409,
  KEY_TYPE: 409,
  FLOW_CHILD_GONE: 409,
  QUEUE_CLOSED: 503,
  REDIS_UNAVAILABLE: 503,
  REDIS_CONNECTION: 503,
  OUTBOX_DATABASE: 503,
};

export function errorView(error: RedisAckQueueError | DashboardRequestError): ErrorView {
  return { code: error.code, message: error.message };
}

/**
 * The HTTP answer of a failed dashboard request: a JSON `{ code, message }` with a status that
 * says whose fault it is. An error that is not the library's is logged by Nest as usual.
 */
export function toHttpException(error: unknown): unknown {
  if (error instanceof DashboardRequestError) return new HttpException(errorView(error), error.status);
  if (error instanceof RedisAckQueueError) {
    return new HttpException(errorView(error), STATUS_OF_CODE[error.code] ?? 500);
  }
  return error;
}
