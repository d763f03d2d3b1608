import type { RedisAckQueueService } from '../../lib';
import { runCliHere as run } from '../support/cli-runs';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

/** A text no output may hold: it is in every tag the bad commands give. */
const SECRET = 'tenant-secret-7f3a';

/** `bulk` (with --dry-run and --wait), `bulk-status` and `bulk-abort`, and tags and start-by deadlines in list and get. */
describe('redis-ack-queue CLI: bulk actions', () => {
  const fx = useRedis();
  let prefixes = 0;

  /** A fresh prefix and a service on it, so each test sees only its own topics and bulk actions. */
  async function setUp() {
    const prefix = `clibulk${++prefixes}`;
    const queue = await fx.service({ prefix, maxAttempts: 1 });
    const cli = (...args: string[]) => run(['--url', fx.server.url, '--prefix', prefix, ...args]);
    /** The bulk actions the prefix has a record of. */
    const bulks = () => fx.redis.hkeys(`{${prefix}:}:bulks`);
    return { prefix, queue, cli, bulks };
  }

  /** Dead letters of `topic` that failed with `error`. */
  async function deadLetters(queue: RedisAckQueueService, topic: string, ids: string[], error: string) {
    await queue.pushMany(
      topic,
      ids.map((id) => ({ id, payload: { id } })),
    );
    // A partitioned topic's reserve takes from one partition per call: reserve until every one died.
    for (let left = ids.length; left > 0;) {
      for (const message of await queue.reserve(topic, { count: left, leaseMs: 60_000 })) {
        await queue.nack(message, { error: new Error(error) });
        left--;
      }
    }
  }

  it('bulk --dry-run prints how many it would select and changes nothing', async () => {
    const { queue, cli, bulks } = await setUp();
    const topic = uniqueTopic('dry');
    await deadLetters(queue, topic, ['d1', 'd2', 'd3'], 'card declined');
    await deadLetters(queue, topic, ['d4'], 'timeout');
    expect(await cli('bulk', topic, 'requeue', '--error-contains', 'declined', '--dry-run')).toEqual({
      code: 0,
      stdout: `Would requeue 3 dead messages of ${topic}.\n`,
      stderr: '',
    });
    const json = await cli('bulk', topic, 'purge', '--dry-run', '--json');
    expect(JSON.parse(json.stdout)).toEqual({ topic, action: 'purge', state: 'dead', selected: 4, dryRun: true });
    expect(JSON.parse((await cli('bulk', topic, 'cancel', '--state', 'ready', '--dry-run', '--json')).stdout)).toEqual(
      expect.objectContaining({ selected: 0 }),
    );
    expect(await queue.stats(topic)).toMatchObject({ dead: 4, ready: 0 });
    expect(await bulks()).toEqual([]);
  });

  it('bulk asks first (refusing without --yes off a terminal), then runs; --wait prints where it ended; bulk-status shows it', async () => {
    const { queue, cli, bulks } = await setUp();
    const topic = uniqueTopic('requeue');
    await deadLetters(queue, topic, ['d1', 'd2', 'd3'], 'card declined');
    await deadLetters(queue, topic, ['d4'], 'timeout');
    const refused = await cli('bulk', topic, 'requeue', '--error-contains', 'declined');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --yes');
    expect(await bulks()).toEqual([]);

    const waited = await cli('bulk', topic, 'requeue', '--error-contains', 'declined', '--yes', '--wait', '--json');
    expect(waited.code).toBe(0);
    const status = JSON.parse(waited.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ topic, action: 'requeue', state: 'done', selected: 3, processed: 3, skipped: 0 });
    expect(await queue.stats(topic)).toMatchObject({ dead: 1, ready: 3 });
    expect((await queue.list(topic, 'dead')).map((m) => m.id)).toEqual(['d4']);

    const id = status.id as string;
    // Hex: one in 64 base64url ids began with '-', which commander took for an unknown option (exit 2).
    expect(id).toMatch(/^[0-9a-f]{18}$/);
    const shown = await cli('bulk-status', id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id: +${id}$`, 'm'));
    expect(shown.stdout).toMatch(/^state: +done$/m);
    expect(shown.stdout).toMatch(/^processed: +3$/m);
    expect(shown.stdout).toMatch(/^createdAt: +\d{4}-\d\d-\d\dT/m);
    expect(JSON.parse((await cli('bulk-status', id, '--json')).stdout)).toEqual(status);

    const started = await cli('bulk', topic, 'purge', '--yes');
    expect(started).toMatchObject({ code: 0, stderr: '' });
    expect(started.stdout).toMatch(
      new RegExp(`^Started bulk action (\\S+): purge 1 dead message of ${topic} \\(bulk-status \\1\\)\\.\\n$`),
    );
  });

  it('bulk runs over every partition of a partitioned topic, found by its recorded partition count', async () => {
    const { prefix, cli } = await setUp();
    const topic = uniqueTopic('parted');
    const queue = await fx.service({ prefix, maxAttempts: 1, topics: { [topic]: { partitions: 3 } } });
    await deadLetters(
      queue,
      topic,
      Array.from({ length: 9 }, (_, i) => `p${i}`),
      'boom',
    );
    expect(JSON.parse((await cli('bulk', topic, 'requeue', '--dry-run', '--json')).stdout)).toMatchObject({
      selected: 9,
    });
    const waited = JSON.parse((await cli('bulk', topic, 'requeue', '--yes', '--wait', '--json')).stdout) as {
      id: string;
    };
    expect(waited).toMatchObject({ state: 'done', selected: 9, processed: 9 });
    expect(JSON.parse((await cli('bulk-status', waited.id, '--json')).stdout)).toEqual(waited);
    expect(await queue.stats(topic)).toMatchObject({ dead: 0, ready: 9 });
  });

  it('bulk-abort stops a running bulk action; both commands exit 3 for one that does not exist', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('abort');
    await deadLetters(
      queue,
      topic,
      Array.from({ length: 200 }, (_, i) => `d${i}`),
      'boom',
    );
    const started = JSON.parse(
      (await cli('bulk', topic, 'purge', '--max-per-second', '1', '--yes', '--json')).stdout,
    ) as Record<string, unknown>;
    expect(started).toMatchObject({ topic, action: 'purge', selected: 200 });
    const id = started.id as string;
    expect(await cli('bulk-abort', id)).toEqual({ code: 0, stdout: `Aborted bulk action ${id}.\n`, stderr: '' });
    expect(await cli('bulk-abort', id)).toEqual({
      code: 0,
      stdout: `Bulk action ${id} was not running: it is aborted.\n`,
      stderr: '',
    });
    const status = JSON.parse((await cli('bulk-status', id, '--json')).stdout) as { state: string; processed: number };
    expect(status.state).toBe('aborted');
    expect((await queue.stats(topic)).dead).toBe(200 - status.processed);

    for (const command of ['bulk-status', 'bulk-abort']) {
      expect(await cli(command, 'no-such-bulk')).toEqual({
        code: 3,
        stdout: '',
        stderr: 'redis-ack-queue: no bulk action no-such-bulk\n',
      });
    }
  });

  it('exits 2 on a bad bulk action, naming the option and never quoting a tag, and changes nothing', async () => {
    const { queue, cli, bulks } = await setUp();
    const topic = uniqueTopic('bad');
    await deadLetters(queue, topic, ['d1'], 'boom');
    const bad: string[][] = [
      ['delete'],
      ['requeue', '--state', 'completed'],
      ['cancel', '--state', 'lost'],
      ['purge', '--tag', SECRET.repeat(10)],
      ['purge', '--tag', `${SECRET}\u0007`],
      ['purge', '--tag', SECRET, '--from', 'yesterday'],
      ['purge', '--tag', SECRET, '--from', '2026-11-29T10:00:00Z', '--to', '2026-11-29T09:00:00Z'],
      ['purge', '--tag', SECRET, '--max-per-second', '0'],
      ['purge', '--tag', SECRET, '--max-per-second', 'fast'],
      ['purge', '--error-contains', SECRET.repeat(100)],
    ];
    for (const args of bad) {
      for (const dryRun of [[], ['--dry-run']]) {
        const refused = await cli('bulk', topic, ...args, ...dryRun, '--yes');
        expect({ args, code: refused.code, stdout: refused.stdout }).toEqual({ args, code: 2, stdout: '' });
        expect({ args, quoted: refused.stderr.includes(SECRET) }).toEqual({ args, quoted: false });
      }
    }
    expect((await cli('bulk', topic, 'requeue', '--state', 'completed', '--dry-run')).stderr).toBe(
      'redis-ack-queue: --state must be one of dead for requeue\n',
    );
    expect(await bulks()).toEqual([]);
    expect(await queue.stats(topic)).toMatchObject({ dead: 1 });
  });

  it('list and get show tags and a start-by deadline with what it becomes after', async () => {
    const { queue, cli } = await setUp();
    const topic = uniqueTopic('marked');
    const startBy = Date.now() + 3_600_000;
    await queue.push(topic, 1, { id: 'm1', tags: ['tenant:42', 'campaign:spring'], startBy, onExpire: 'drop' });
    await queue.push(topic, 2, { id: 'm2' });
    const got = await cli('get', topic, 'm1');
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(/^tags: +tenant:42, campaign:spring$/m);
    expect(got.stdout).toMatch(new RegExp(`^startBy: +${new Date(startBy).toISOString()}$`, 'm'));
    expect(got.stdout).toMatch(/^onExpire: +drop$/m);
    const listed = (await cli('list', topic, 'ready')).stdout.trimEnd().split('\n');
    expect(listed[0].split(/\s+/)).toEqual([
      'ID',
      'ATTEMPT',
      'ENQUEUED',
      'DUE',
      'PRIORITY',
      'START-BY',
      'ON-EXPIRE',
      'TAGS',
    ]);
    expect(listed[1].split(/\s+/).slice(-3)).toEqual([
      new Date(startBy).toISOString(),
      'drop',
      'tenant:42,campaign:spring',
    ]);
    expect(listed[2].split(/\s+/).slice(-3)).toEqual(['-', '-', '-']);
    expect(JSON.parse((await cli('get', topic, 'm1', '--json')).stdout)).toMatchObject({
      tags: ['tenant:42', 'campaign:spring'],
      startBy,
      onExpire: 'drop',
    });
  });
});
