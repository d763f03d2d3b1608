/**
 * How a Nest packet travels in a queue message: its pattern is the topic, its data the body
 * (or what the client's `serializer` made of the whole packet), its metadata (Nest 12's
 * `setOnDispatchHook`) the JSON of one header.
 */

/** The header holding a packet's metadata, as JSON. */
export const METADATA_HEADER = 'ackq-metadata';

/** What a client's dispatch hook attached to a packet: out-of-band values (a trace id, a tenant). */
export type RedisAckQueuePacketMetadata = Record<string, string>;

/** A packet as Nest's serializers and deserializers see it. */
export interface TransportPacket {
  pattern?: unknown;
  data?: unknown;
  id?: string;
  metadata?: RedisAckQueuePacketMetadata;
}

/** `headers` with the one that carries `metadata` (the same headers without it). */
export function withMetadata(
  headers: Record<string, string> | undefined,
  metadata: RedisAckQueuePacketMetadata | undefined,
): Record<string, string> | undefined {
  return metadata === undefined ? headers : { ...headers, [METADATA_HEADER]: JSON.stringify(metadata) };
}

/** The metadata a message's headers carry; undefined without it (or with a header this package did not write). */
export function metadataOf(headers: Record<string, string>): RedisAckQueuePacketMetadata | undefined {
  const text = headers[METADATA_HEADER];
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as RedisAckQueuePacketMetadata)
      : undefined;
  } catch {
    return undefined;
  }
}
