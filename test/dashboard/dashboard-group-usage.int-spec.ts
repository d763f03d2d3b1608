import type { GroupUsage } from '../../lib';
import { eventually, uniqueTopic, useRedis } from '../support/queue-fixture';
import { OPERATOR, startDashboardApp, type DashboardApp, type Platform } from './dashboard-app';

/**
 * The topic view's "Top groups" table reads /api/group-usage: the last hour's ten groups with the
 * most handler time, their totals without their minutes. A group's name is the user's data: the
 * API answers it as JSON text, and the page puts it in the table as text (group-usage-panel.js
 * builds every cell with dom.js's h(), which appends strings as text nodes).
 */
describe.each<Platform>(['express', 'fastify'])('dashboard group usage (%s)', (platform) => {
  const fx = useRedis();
  let served: DashboardApp;
  beforeAll(async () => {
    served = await startDashboardApp(platform, fx.connection, uniqueTopic('p'));
  });
  afterAll(() => served.close());
  const get = (path: string) => fetch(`${served.url}${path}`, { headers: { authorization: OPERATOR } });

  it('answers the top groups of the last hour, most handler time first, with their totals only', async () => {
    const topic = uniqueTopic('orders');
    const names = Array.from({ length: 12 }, (_, i) => `tenant-${i}`);
    names.push('<img src=x onerror=alert(1)>');
    await served.queue.pushMany(
      topic,
      names.flatMap((group, i) =>
        Array.from({ length: 1 + (i % 3) }, (_, k) => ({ id: `${i}-${k}`, payload: i, group })),
      ),
    );
    const consumer = served.queue.consume(topic, async (i: number) => {
      await new Promise((resolve) => setTimeout(resolve, 2 + i));
    });
    await served.queue.waitUntilIdle(topic);
    await consumer.close();
    // The counts reach Redis within a second (the history's flush); wait for every group.
    const usage = await eventually(async () => {
      const read = await served.queue.groupUsage(topic, { top: 1_000 });
      return read.groupCount === names.length ? read : undefined;
    });
    const response = await get(`/api/group-usage?topic=${topic}`);
    expect(response.status).toBe(200);
    const table = (await response.json()) as GroupUsage;
    expect(table.groupCount).toBe(names.length);
    expect(table.groups).toHaveLength(10);
    expect(table.groups).toEqual(usage!.groups.slice(0, 10).map(({ minutes: _minutes, ...totals }) => totals));
    expect(table.to - table.from).toBe(3_600_000);
  });

  it('refuses a topic that is not one with 400, and answers no groups for a quiet topic', async () => {
    expect((await get('/api/group-usage?topic=no%20spaces')).status).toBe(400);
    const quiet = (await (await get(`/api/group-usage?topic=${uniqueTopic('quiet')}`)).json()) as GroupUsage;
    expect(quiet).toMatchObject({ groupCount: 0, groups: [] });
  });
});
