import type { GroupUsage, RedisAckQueueService } from '../../lib';
import { type CliRun, runCliHere } from '../support/cli-runs';
import { uniqueTopic, useRedis } from '../support/queue-fixture';

/** `usage <topic>`: the table and JSON of what groupUsage() answers, and usage errors that read nothing. */
describe('redis-ack-queue usage', () => {
  const fx = useRedis();
  let reader: RedisAckQueueService;
  let cli: (...args: string[]) => Promise<CliRun>;
  const topic = uniqueTopic('usage');
  const prefix = uniqueTopic('cliu');
  // A group name a terminal would act on: shown inert.
  const odd = 'evil\x1b[2Jgroup';

  beforeAll(async () => {
    const worker = await fx.service({ prefix, maxAttempts: 1, logLevel: 'silent' });
    const consumer = worker.consume(topic, async (id: string) => {
      await new Promise((resolve) => setTimeout(resolve, id.startsWith('slow') ? 30 : 1));
      if (id.startsWith('dead')) throw new Error('no');
    });
    await worker.pushMany(topic, [
      ...['slow-1', 'slow-2', 'slow-3'].map((id) => ({ id, payload: id, group: 'tenant-a' })),
      { id: 'dead-1', payload: 'dead-1', group: 'tenant-b' },
      { id: 'fast-1', payload: 'fast-1', group: odd },
      { id: 'plain', payload: 'plain' },
    ]);
    await worker.waitUntilIdle(topic);
    await consumer.close();
    // Its close sends what it counted.
    await worker.close();
    reader = await fx.service({ prefix });
    cli = (...args) => runCliHere(['--url', fx.server.url, '--prefix', prefix, ...args]);
  });

  it('prints the top groups by handler time, with their counts, and how many groups there were', async () => {
    const shown = await cli('usage', topic);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    const [head, ...rows] = shown.stdout.trimEnd().split('\n');
    expect(head.split(/\s{2,}/)).toEqual(['GROUP', 'HANDLED', 'FAILED', 'RETRIED', 'DEAD', 'HANDLER TIME']);
    expect(rows).toHaveLength(4);
    expect(rows[0].split(/\s+/).slice(0, 5)).toEqual(['tenant-a', '3', '0', '0', '0']);
    const others = rows.slice(1, 3).map((row) => row.split(/\s+/).slice(0, 5));
    expect(others).toContainEqual(['tenant-b', '0', '1', '0', '1']);
    expect(others).toContainEqual(['evil\\x1b[2Jgroup', '1', '0', '0', '0']);
    expect(shown.stdout).not.toContain('\x1b');
    expect(rows[3]).toMatch(/^3 of 3 groups, \d{4}-\d\d-\d\dT\d\d:\d\dZ to /);

    const one = await cli('usage', topic, '--top', '1', '--last', '24h');
    expect(one.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(one.stdout).toContain('1 of 3 groups');
  });

  it('answers --json with what groupUsage() answers', async () => {
    const json = JSON.parse((await cli('usage', topic, '--json', '--top', '2')).stdout) as GroupUsage;
    expect(json).toEqual(await reader.groupUsage(topic, { top: 2 }));
    expect(json.groupCount).toBe(3);
    const quiet = JSON.parse((await cli('usage', uniqueTopic('quiet'), '--json')).stdout) as GroupUsage;
    expect(quiet).toMatchObject({ groupCount: 0, groups: [] });
    expect((await cli('usage', uniqueTopic('quiet'))).stdout).toContain('No group of');
  });

  it.each([
    [['--top', '0'], '--top must be a whole number of groups from 1 to 1000'],
    [['--top', '1001'], '--top must be a whole number of groups from 1 to 1000'],
    [['--top', 'ten'], '--top must be a whole number of groups from 1 to 1000'],
    [['--last', '26h'], '--last must be a duration from 1 minute to 25 hours'],
    [['--from', 'yesterday'], '--from must be a time'],
    [['--from', '2026-11-26T10:00Z', '--last', '1h'], 'give --from or --last, not both'],
    [['--from', '2026-11-26T10:00Z', '--to', '2026-11-26T09:00Z'], '--from must not be after --to'],
  ])('refuses %j with exit code 2 and one line saying what to change', async (args, text) => {
    const refused = await cli('usage', topic, ...args);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`redis-ack-queue: ${text}`);
    expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
