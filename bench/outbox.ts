// The transactional outbox: relay lag and database cost. On a private PostgreSQL and a private
// redis-server, a writer commits RATE transactions a second for SECONDS, each one pg transaction
// (BEGIN; pushInTransaction through a pg PoolClient; COMMIT); a consumer in the same process
// receives the messages the relay pushed. Prints the lag (COMMIT resolved -> handler called,
// p50/p99/max) with one relay and with two, the statements each side runs per message (from
// pg_stat_statements, per database role: the writer's pool, the relays' pools), the WAL bytes per
// message, and a row's size in the table.
// Run: npm run bench:outbox [-- --rate=1000 --seconds=20 --quick]
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Client, Pool } from 'pg';
import { RedisAckQueueService, outboxMigrationSql } from '../lib';
import { PostgresServer } from '../support/postgres-processes/postgres-server';
import { BenchRedis } from './redis-server';

const quick = process.argv.includes('--quick');
const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const RATE = arg('rate', 1_000);
const SECONDS = arg('seconds', quick ? 5 : 20);
/** Messages of the first second are left out of the lag figures (connections and JIT warm up). */
const WARMUP_MS = 1_000;
const TABLE = 'redis_ack_queue_outbox';

/** The roles the statements are counted by: each side connects as its own. */
const ROLES = { writer: 'bench_writer', relay: 'bench_relay' } as const;

interface PhaseResult {
  relays: number;
  sent: number;
  received: number;
  duplicates: number;
  achievedRate: number;
  lag: { p50: number; p99: number; max: number };
  statements?: { writer: Statements; relay: Statements; relayTop: string[] };
  walBytesPerMessage: number;
}

interface Statements {
  /** Statements per message, BEGIN/COMMIT included. */
  all: number;
  /** Without BEGIN / COMMIT / ROLLBACK. */
  own: number;
}

const urlAs = (pg: PostgresServer, role: string) => pg.urlAs(role);

async function startPostgres(): Promise<{ pg: PostgresServer; admin: Client; statements: boolean }> {
  const pg = await PostgresServer.start({ shared_preload_libraries: 'pg_stat_statements' });
  const admin = new Client(pg.urlAs());
  await admin.connect();
  let statements = true;
  try {
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await admin.query('SELECT pg_stat_statements_reset()');
  } catch (error) {
    statements = false;
    console.log(`pg_stat_statements unavailable (${(error as Error).message}): no statement counts`);
  }
  for (const role of Object.values(ROLES)) await admin.query(`CREATE ROLE ${role} LOGIN SUPERUSER`);
  await admin.query(outboxMigrationSql());
  return { pg, admin, statements };
}

const walLsn = async (admin: Client) =>
  (await admin.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn;
const walDiff = async (admin: Client, from: string) =>
  Number((await admin.query<{ d: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [from])).rows[0].d);

async function statementsByRole(admin: Client, messages: number): Promise<PhaseResult['statements']> {
  const { rows } = await admin.query<{ role: string; query: string; calls: string }>(
    `SELECT r.rolname AS role, s.query, s.calls::text AS calls
       FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
      WHERE r.rolname = ANY($1)`,
    [Object.values(ROLES)],
  );
  const side = (role: string): Statements => {
    const mine = rows.filter((row) => row.role === role);
    const sum = (list: typeof rows) => list.reduce((total, row) => total + Number(row.calls), 0);
    const own = mine.filter((row) => !/^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION)\b/i.test(row.query));
    return { all: sum(mine) / messages, own: sum(own) / messages };
  };
  const relayTop = rows
    .filter((row) => row.role === ROLES.relay)
    .sort((a, b) => Number(b.calls) - Number(a.calls))
    .slice(0, 8)
    .map((row) => `${(Number(row.calls) / messages).toFixed(3)}/msg  ${row.query.replace(/\s+/g, ' ').slice(0, 110)}`);
  return { writer: side(ROLES.writer), relay: side(ROLES.relay), relayTop };
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** A row's size: RATE rows written with no relay running, measured, then deleted. */
async function rowSize(pg: PostgresServer, admin: Client): Promise<string> {
  const writerService = new RedisAckQueueService({
    connection: process.env.BENCH_REDIS_URL!,
    outbox: { connection: pg.urlAs(), relay: false },
    logLevel: 'error',
  });
  const pool = new Pool({ connectionString: urlAs(pg, ROLES.writer), max: 4 });
  const count = 1_000;
  try {
    await admin.query(`VACUUM FULL ${TABLE}`);
    const sizeBefore = Number(
      (await admin.query<{ s: string }>(`SELECT pg_total_relation_size('${TABLE}') AS s`)).rows[0].s,
    );
    const lsn = await walLsn(admin);
    const client = await pool.connect();
    for (let i = 0; i < count; i++) {
      await client.query('BEGIN');
      await writerService.pushInTransaction(client, 'bench.outbox.size', { i, orderId: randomUUID() });
      await client.query('COMMIT');
    }
    client.release();
    const wal = (await walDiff(admin, lsn)) / count;
    const sizeAfter = Number(
      (await admin.query<{ s: string }>(`SELECT pg_total_relation_size('${TABLE}') AS s`)).rows[0].s,
    );
    const column = Number(
      (await admin.query<{ s: string }>(`SELECT avg(pg_column_size(t.*)) AS s FROM ${TABLE} t`)).rows[0].s,
    );
    await admin.query(`DELETE FROM ${TABLE}`);
    return (
      `row ${column.toFixed(0)} B (pg_column_size), table+indexes ${((sizeAfter - sizeBefore) / count).toFixed(0)} B/row ` +
      `(pg_total_relation_size delta over ${count} rows), WAL ${wal.toFixed(0)} B/message written (writer only, no relay)`
    );
  } finally {
    await pool.end();
    await writerService.close(0);
  }
}

async function phase(pg: PostgresServer, admin: Client, redisUrl: string, relays: number, statements: boolean) {
  const topic = `bench.outbox.${relays}.${Date.now()}`;
  const relayServices: RedisAckQueueService[] = [];
  for (let r = 0; r < relays; r++) {
    const service = new RedisAckQueueService({
      connection: redisUrl,
      outbox: { connection: urlAs(pg, ROLES.relay), relay: true },
      logLevel: 'error',
    });
    await service.connect();
    relayServices.push(service);
  }
  // The writer's service writes rows only; its own pool (outboxStatus) is the admin role's.
  const writerService = new RedisAckQueueService({
    connection: redisUrl,
    outbox: { connection: pg.urlAs(), relay: false },
    logLevel: 'error',
  });
  const consumer = new RedisAckQueueService({ connection: redisUrl, logLevel: 'error' });
  const total = RATE * SECONDS;
  const committedAt = new Float64Array(total).fill(NaN);
  const receivedAt = new Float64Array(total).fill(NaN);
  let received = 0;
  let duplicates = 0;
  let allReceived: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (allReceived = resolve));
  consumer.consume<{ i: number }>(
    topic,
    ({ i }) => {
      if (!Number.isNaN(receivedAt[i])) duplicates++;
      else {
        receivedAt[i] = performance.now();
        if (++received === total) allReceived();
      }
    },
    { concurrency: 64 },
  );
  const pool = new Pool({ connectionString: urlAs(pg, ROLES.writer), max: 32 });
  // Warm the pool: its connections are opened before the clock starts.
  await Promise.all(Array.from({ length: 32 }, async () => (await pool.connect()).release()));
  if (statements) await admin.query('SELECT pg_stat_statements_reset()');
  const lsn = await walLsn(admin);

  const commit = async (i: number) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await writerService.pushInTransaction(client, topic, { i, orderId: randomUUID() }, { id: `m-${i}` });
      await client.query('COMMIT');
      committedAt[i] = performance.now();
    } finally {
      client.release();
    }
  };
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  while (next < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) * RATE) / 1_000) + 1);
    for (; next < due; next++) {
      const pending = commit(next).finally(() => inFlight.delete(pending));
      inFlight.add(pending);
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await Promise.all(inFlight);
  const elapsed = performance.now() - started;
  // Waits for the rest, giving up when nothing arrived for 10 s (a relay that stopped).
  for (let seen = -1; received < total && received !== seen;) {
    seen = received;
    await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  // Late duplicates would come within a poll; one more second to see them.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const walBytesPerMessage = (await walDiff(admin, lsn)) / total;
  const counted = statements ? await statementsByRole(admin, total) : undefined;

  const lags: number[] = [];
  for (let i = 0; i < total; i++) {
    if (committedAt[i] - started < WARMUP_MS) continue;
    // A message handled before its COMMIT's reply was read has no lag to speak of.
    if (!Number.isNaN(receivedAt[i])) lags.push(Math.max(0, receivedAt[i] - committedAt[i]));
  }
  lags.sort((a, b) => a - b);
  await pool.end();
  await Promise.all([consumer.close(5_000), writerService.close(0), ...relayServices.map((s) => s.close(5_000))]);
  return {
    relays,
    sent: total,
    received,
    duplicates,
    achievedRate: (total / elapsed) * 1_000,
    lag: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags[lags.length - 1] ?? NaN },
    statements: counted,
    walBytesPerMessage,
  } satisfies PhaseResult;
}

async function main(): Promise<void> {
  const redis = await BenchRedis.start();
  process.env.BENCH_REDIS_URL = redis.url;
  const { pg, admin, statements } = await startPostgres();
  try {
    const version = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
    console.log(
      `Outbox relay: ${RATE} commits/s for ${SECONDS} s, PostgreSQL ${version} (fsync off), ${redis.version()}, ` +
        `Node ${process.version}; writer, relays and consumer in this one process`,
    );
    console.log(`Storage: ${await rowSize(pg, admin)}`);
    for (const relays of [1, 2]) {
      const result = await phase(pg, admin, redis.url, relays, statements);
      const f = (n: number) => n.toFixed(1);
      console.log(
        `\n${relays} relay(s): sent ${result.sent} at ${result.achievedRate.toFixed(0)}/s, received ${result.received}, ` +
          `duplicates ${result.duplicates}; lag p50 ${f(result.lag.p50)} ms, p99 ${f(result.lag.p99)} ms, ` +
          `max ${f(result.lag.max)} ms (goal p99 <= 50 ms: ${result.lag.p99 <= 50 ? 'met' : 'NOT met'}); ` +
          `WAL ${result.walBytesPerMessage.toFixed(0)} B/message (writer + relay)`,
      );
      if (result.statements) {
        const { writer, relay, relayTop } = result.statements;
        console.log(
          `  statements per message: writer ${writer.own.toFixed(2)} own (${writer.all.toFixed(2)} with BEGIN/COMMIT), ` +
            `relay ${relay.own.toFixed(3)} own (${relay.all.toFixed(3)} with BEGIN/COMMIT)`,
        );
        for (const line of relayTop) console.log(`    relay ${line}`);
      }
      // Speed is only reported; a message lost or received twice fails the run (CI's smoke run too).
      if (result.received !== result.sent || result.duplicates > 0) {
        throw new Error(
          `${relays} relay(s): sent ${result.sent}, received ${result.received}, ${result.duplicates} twice`,
        );
      }
    }
  } finally {
    await admin.end();
    await pg.stop();
    await redis.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
