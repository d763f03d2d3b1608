import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidOptionError, RedisAckQueueService, outboxMigrationSql } from '../../lib';
import { resolveOutboxSettings } from '../../lib/outbox/outbox-settings';
import { pushRow, workOf, type OutboxRow } from '../../lib/outbox/outbox-rows';

describe('the outbox table', () => {
  it('ships sql/outbox.sql as outboxMigrationSql() prints it', () => {
    expect(readFileSync(join(__dirname, '../../sql/outbox.sql'), 'utf8')).toBe(outboxMigrationSql());
  });

  it('names everything after the table, in its schema', () => {
    const sql = outboxMigrationSql('app.queue_outbox');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "app"."queue_outbox" (');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "app"."queue_outbox_relays" (');
    expect(sql).toContain(`pg_notify('app.queue_outbox', '')`);
  });

  it.each([['Orders'], ['1abc'], ['a;drop table x'], ['a.b.c'], [''], ['x'.repeat(56)], [42]])(
    'refuses the table name %p',
    (table) => {
      expect(() => outboxMigrationSql(table as string)).toThrow(InvalidOptionError);
    },
  );
});

describe('the outbox option', () => {
  it('has defaults, and a relay unless told not to', () => {
    expect(resolveOutboxSettings({ connection: 'postgres://h/db' })).toMatchObject({
      table: { name: 'redis_ack_queue_outbox' },
      relay: { batchSize: 500, pollMs: 1_000 },
    });
    expect(resolveOutboxSettings({ connection: { host: 'h' }, relay: false })?.relay).toBeUndefined();
  });

  it.each([
    [{}],
    [{ connection: 'mysql://h/db' }],
    [{ connection: 'postgres://h/db', table: 'Bad' }],
    [{ connection: 'postgres://h/db', relay: { batchSize: 0 } }],
    [{ connection: 'postgres://h/db', relay: { pollMs: 1.5 } }],
    [{ connection: 'postgres://h/db', relay: 'yes' }],
    [{ connection: 'postgres://h/db', tables: 'x' }],
    ['postgres://h/db'],
  ])('refuses %p before anything connects, never quoting a connection', (outbox) => {
    const construct = () =>
      new RedisAckQueueService({
        connection: 'redis://127.0.0.1:1',
        outbox: outbox as never,
        logLevel: 'silent',
      });
    expect(construct).toThrow(InvalidOptionError);
  });

  it('never says a password it was given', () => {
    try {
      resolveOutboxSettings({ connection: 'mysql://user:s3cret@h/db' });
    } catch (error) {
      expect(String(error)).not.toContain('s3cret');
      expect((error as InvalidOptionError).value).toBeUndefined();
    }
    expect.assertions(2);
  });
});

describe('outbox rows', () => {
  const row = (values: Partial<OutboxRow>): OutboxRow => ({
    rowId: '1',
    receipt: 'r',
    createdAt: 0,
    kind: 'push',
    topic: 't',
    messageId: 'm',
    payload: '1',
    options: null,
    ...values,
  });

  it('keeps every option through the row, dates as epoch ms', () => {
    const written = pushRow(
      't',
      {
        payload: { a: 1 },
        id: 'm1',
        availableAt: new Date(5_000),
        startBy: new Date(9_000),
        priority: 3,
        tags: ['x'],
        headers: { h: 'v' },
      },
      1_000,
    );
    expect(written).toEqual({
      kind: 'push',
      topic: 't',
      messageId: 'm1',
      payload: '{"a":1}',
      options: '{"availableAt":5000,"startBy":9000,"priority":3,"tags":["x"],"headers":{"h":"v"}}',
    });
    expect(workOf(row(written))).toEqual({
      kind: 'push',
      topic: 't',
      item: {
        payload: { a: 1 },
        id: 'm1',
        availableAt: 5_000,
        startBy: 9_000,
        priority: 3,
        tags: ['x'],
        headers: { h: 'v' },
      },
    });
  });

  it('gives a key-mode push no id, and others a new UUID', () => {
    expect(pushRow('t', { payload: 1, debounce: { key: 'k', delayMs: 10 } }, 1_000).messageId).toBe('');
    expect(pushRow('t', { payload: 1 }, 1_000).messageId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([[{ kind: 'weird' as 'push' }], [{ payload: 'not json' }], [{ options: '[1]' }], [{ options: '{' }]])(
    'refuses an unreadable row %p with a typed error that quotes no payload',
    (values) => {
      expect(() => workOf(row(values))).toThrow(InvalidOptionError);
    },
  );
});
