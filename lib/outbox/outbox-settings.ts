import { InvalidOptionError } from '../errors';
import type { OutboxConnection, OutboxOptions } from '../interfaces';
import { assertInteger, isPlainObject } from '../queue/validation';
import { DEFAULT_OUTBOX_TABLE, OutboxTable } from './outbox-table';

/** The option `outbox`, checked and with its defaults. */
export interface OutboxSettings {
  connection: OutboxConnection;
  table: OutboxTable;
  /** The relay's settings, or undefined when this process runs none (`relay: false`). */
  relay: { batchSize: number; pollMs: number } | undefined;
}

const OPTION_KEYS = new Set(['connection', 'table', 'relay']);
const RELAY_KEYS = new Set(['batchSize', 'pollMs']);

/**
 * Checks the option `outbox` before anything connects; undefined when it is left out.
 * @throws {InvalidOptionError} on the first bad field (a connection is never quoted: it may hold a password).
 */
export function resolveOutboxSettings(options: OutboxOptions | undefined): OutboxSettings | undefined {
  if (options === undefined) return undefined;
  if (!isPlainObject(options))
    throw new InvalidOptionError('outbox', options, 'an object { connection, table?, relay? }');
  const unknown = Object.keys(options).find((key) => !OPTION_KEYS.has(key));
  if (unknown !== undefined) throw new InvalidOptionError(`outbox.${unknown}`, unknown, 'connection, table or relay');
  const { connection, table = DEFAULT_OUTBOX_TABLE, relay = true } = options;
  if (!(typeof connection === 'string' && /^postgres(ql)?:\/\//.test(connection)) && !isPlainObject(connection)) {
    throw new InvalidOptionError(
      'outbox.connection',
      undefined,
      'a postgres:// URL or the options of a pg Pool ({ host, port, user, password, database... })',
    );
  }
  return { connection, table: new OutboxTable(table), relay: resolveRelay(relay) };
}

function resolveRelay(relay: unknown): OutboxSettings['relay'] {
  if (relay === false) return undefined;
  if (relay === true) return { batchSize: 500, pollMs: 1_000 };
  if (!isPlainObject(relay))
    throw new InvalidOptionError('outbox.relay', relay, 'true, false or { batchSize?, pollMs? }');
  const unknown = Object.keys(relay).find((key) => !RELAY_KEYS.has(key));
  if (unknown !== undefined) throw new InvalidOptionError(`outbox.relay.${unknown}`, unknown, 'batchSize or pollMs');
  const { batchSize = 500, pollMs = 1_000 } = relay;
  assertInteger('outbox.relay.batchSize', batchSize, 1, 10_000);
  assertInteger('outbox.relay.pollMs', pollMs, 10, 3_600_000);
  return { batchSize: batchSize as number, pollMs: pollMs as number };
}
