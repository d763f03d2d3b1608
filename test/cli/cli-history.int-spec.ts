import type { QueueConsumer, RedisAckQueueService, TopicHistory, TopicHistoryPoint } from '../../lib';
import { type CliRun, runCliBinary, runCliHere } from '../support/cli-runs';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';

const sum = (history: TopicHistory, key: 'pushed' | 'acked' | 'dead') =>
  history.points.reduce((total, point) => total + point[key], 0);

/** `history <topic>`: the table and JSON of what history() answers, and usage errors that read nothing. */
describe('redis-ack-queue history', () => {
  const fx = useRedis();
  let queue: RedisAckQueueService;
  let cli: (...args: string[]) => Promise<CliRun>;
  let consumer: QueueConsumer;
  const topic = uniqueTopic('hist');

  afterAll(() => consumer?.close());
  const prefix = uniqueTopic('clih');
  beforeAll(async () => {
    queue = await fx.service({ prefix, maxAttempts: 1 });
    cli = (...args) => runCliHere(['--url', fx.server.url, '--prefix', prefix, ...args]);
    // Five pushed and handled by a consumer (which times them): three acked, two dead. The
    // history has them once its recorder has flushed.
    consumer = queue.consume(topic, (id: string) => {
      if (id.startsWith('d')) throw new Error('no');
    });
    await queue.pushMany(
      topic,
      ['a1', 'a2', 'a3', 'd1', 'd2'].map((id) => ({ id, payload: id })),
    );
    await eventually(async () => {
      const history = await queue.history(topic);
      return sum(history, 'pushed') === 5 && sum(history, 'acked') === 3 && sum(history, 'dead') === 2;
    });
  });

  it('prints a row per minute of the last hour, with the counts history() holds', async () => {
    const shown = await cli('history', topic);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    const [head, ...rows] = shown.stdout.trimEnd().split('\n');
    expect(head.split(/\s{2,}/)).toEqual([
      'TIME',
      'PUSHED',
      'ACKED',
      'RETRIED',
      'DEAD',
      'CANCELLED',
      'WAIT P50',
      'WAIT P95',
      'WAIT P99',
      'HANDLING P50',
      'HANDLING P95',
      'HANDLING P99',
    ]);
    const history = await queue.history(topic);
    expect(rows).toHaveLength(history.points.length);
    const cells = rows.map((row) => row.split(/\s+/));
    const at = (point: TopicHistoryPoint) => `${new Date(point.at).toISOString().slice(0, 16)}Z`;
    expect(cells.map((row) => row[0])).toEqual(history.points.map(at));
    const counts = (row: string[]) => row.slice(1, 6).map(Number);
    const totals = cells.reduce((total, row) => total.map((n, i) => n + counts(row)[i]), [0, 0, 0, 0, 0]);
    expect(totals).toEqual([5, 3, 0, 2, 0]);
    // A minute that had deliveries has their wait and handling percentiles; one without shows dashes.
    const busy = cells.find((row) => Number(row[2]) + Number(row[4]) > 0)!;
    for (const ms of busy.slice(6)) expect(ms).toMatch(/^\d+(\.\d)?$/);
    expect(cells.find((row) => Number(row[1]) === 0 && Number(row[2]) === 0)!.slice(6)).toEqual(Array(6).fill('-'));
  });

  it('answers --json with the history of a range: --last and --step, or --from and --to', async () => {
    const day = JSON.parse(
      (await cli('history', topic, '--last', '24h', '--step', '15m', '--json')).stdout,
    ) as TopicHistory;
    expect(day.points).toHaveLength(96);
    expect(day).toMatchObject({ topic, stepMs: 900_000, to: day.from + 86_400_000 });
    expect([sum(day, 'pushed'), sum(day, 'acked'), sum(day, 'dead')]).toEqual([5, 3, 2]);

    const now = (await queue.history(topic)).to;
    const from = new Date(now - 10 * 60_000).toISOString();
    const ranged = await cli(
      'history',
      topic,
      '--from',
      from,
      '--to',
      String(now - 60_000),
      '--step',
      '60000',
      '--json',
    );
    const history = JSON.parse(ranged.stdout) as TopicHistory;
    expect(history).toEqual(await queue.history(topic, { from: now - 10 * 60_000, to: now - 60_000, stepMs: 60_000 }));
    expect(history.points).toHaveLength(10);
    // A time without a zone is UTC, as the table prints times, whatever the machine's zone (the
    // binary: a process of its own in another zone).
    const unzoned = await runCliBinary(
      ['--url', fx.server.url, '--prefix', prefix, 'history', topic, '--from', from.slice(0, 16), '--json'],
      { TZ: 'America/New_York' },
    );
    expect((JSON.parse(unzoned.stdout) as TopicHistory).from).toBe(now - 10 * 60_000);
  });

  it.each([
    [['--step', '90s'], '--step must be a whole number of minutes'],
    [['--step', 'often'], '--step must be a whole number of minutes'],
    [['--last', '26h'], '--last must be a duration from 1 minute to 25 hours'],
    [['--from', 'yesterday'], '--from must be a time'],
    [['--to', '2026-13-45T99:00'], '--to must be a time'],
    [['--from', '2026-11-26T10:00Z', '--last', '1h'], 'give --from or --last, not both'],
    [['--from', '2026-11-26T10:00Z', '--to', '2026-11-26T09:00Z'], '--from must not be after --to'],
    [['--from', '0', '--to', '86400000000'], 'the range holds 1440000 steps, over 1500'],
  ])('refuses %j with exit code 2 and one line saying what to change', async (args, text) => {
    const refused = await cli('history', topic, ...args);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`redis-ack-queue: ${text}`);
    expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
