import type { RedisAckQueueService, ScalingReport } from '../../lib';
import { type CliRun, runCliHere } from '../support/cli-runs';
import { snapshotTopic, uniqueTopic, useRedis } from '../support/queue-fixture';

/** `scaling <topic>`: reads the signal, sets and removes the target, refuses bad options changing nothing. */
describe('redis-ack-queue scaling', () => {
  const fx = useRedis();
  let queue: RedisAckQueueService;
  let cli: (...args: string[]) => Promise<CliRun>;
  const prefix = uniqueTopic('clis');

  beforeAll(async () => {
    queue = await fx.service({ prefix, history: false });
    cli = (...args) => runCliHere(['--url', fx.server.url, '--prefix', prefix, ...args]);
  });

  it('says a topic without a target is not found (exit 3)', async () => {
    const run = await cli('scaling', uniqueTopic());
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('no scaling target');
  });

  it('sets the target, prints the signal (as JSON with --json), and removes it', async () => {
    const topic = uniqueTopic();
    await queue.pushMany(
      topic,
      Array.from({ length: 4 }, (_, n) => ({ payload: n })),
    );
    const set = await cli(
      '--json',
      'scaling',
      topic,
      '--target-wait',
      '1500',
      '--max-consumers',
      '9',
      '--concurrency',
      '2',
    );
    expect(set).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(set.stdout) as ScalingReport;
    expect(report).toMatchObject({ topic, targetWaitMs: 1500, maxConsumers: 9, concurrency: 2, backlog: 4 });
    expect(await queue.scaling(topic)).toMatchObject({ targetWaitMs: 1500, maxConsumers: 9 });

    const shown = await cli('scaling', topic);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toMatch(/desired consumers: +1\n/);
    expect(shown.stdout).toMatch(/target wait ms: +1500\n/);

    expect(await cli('scaling', topic, '--remove')).toMatchObject({ code: 0, stdout: 'Scaling target removed.\n' });
    expect(await queue.scaling(topic)).toBeNull();
  });

  it.each([
    [['--target-wait', '0']],
    [['--target-wait', '1000', '--min-consumers', '5', '--max-consumers', '2']],
    [['--max-consumers', '2']],
    [['--remove', '--target-wait', '100']],
    [['--target-wait', 'soon']],
  ])('refuses %j as a usage error (exit 2), changing nothing', async (args) => {
    const topic = uniqueTopic();
    await queue.setScalingTarget(topic, { targetWaitMs: 700 });
    const before = await snapshotTopic(fx.redis, topic, prefix);
    const run = await cli('scaling', topic, ...args);
    expect(run.code).toBe(2);
    expect(await snapshotTopic(fx.redis, topic, prefix)).toEqual(before);
  });
});
