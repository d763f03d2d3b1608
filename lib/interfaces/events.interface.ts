export type RedisAckQueueEventType = 'pushed' | 'reserved' | 'acked' | 'retried' | 'dead' | 'lease-lost' | 'error';

/** One entry of `service.events$`. Never carries payloads. */
export interface RedisAckQueueEvent {
  type: RedisAckQueueEventType;
  topic: string;
  id?: string;
  attempt?: number;
  /** For retried, dead, lease-lost and error events. */
  error?: Error;
}
