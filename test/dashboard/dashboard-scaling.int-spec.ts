import type { ScalingReport } from '../../lib';
import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { OPERATOR, startDashboardApp, type DashboardApp } from './dashboard-app';

/** The dashboard's scaling route (the topic view's Scaling panel reads it) and the panel's script. */
describe('dashboard scaling', () => {
  const fx = useRedis();
  let served: DashboardApp;
  const prefix = uniqueTopic('dscale');
  const get = (path: string) => fetch(`${served.url}${path}`, { headers: { authorization: OPERATOR } });

  beforeAll(async () => {
    served = await startDashboardApp('express', fx.connection, prefix);
    fx.closers.push(() => served.close());
  });

  it("answers a topic's scaling signal, null without a target, 400 for a bad name", async () => {
    const topic = uniqueTopic();
    const none = await get(`/api/scaling?topic=${topic}`);
    expect(none.status).toBe(200);
    expect(await none.json()).toEqual({ scaling: null });
    await served.queue.pushMany(
      topic,
      Array.from({ length: 3 }, (_, n) => ({ payload: n })),
    );
    await served.queue.setScalingTarget(topic, { targetWaitMs: 800, maxConsumers: 5 });
    const read = await get(`/api/scaling?topic=${topic}`);
    const { scaling } = (await read.json()) as { scaling: ScalingReport };
    expect(scaling).toMatchObject({ topic, desiredConsumers: 1, backlog: 3, targetWaitMs: 800, maxConsumers: 5 });
    expect((await get(`/api/scaling?topic=${encodeURIComponent('a b')}`)).status).toBe(400);
  });

  it('needs the guard', async () => {
    expect((await fetch(`${served.url}/api/scaling?topic=${uniqueTopic()}`)).status).toBe(403);
  });

  it('serves the panel script the topic view imports', async () => {
    const view = await (await get('/assets/topic-view.js')).text();
    expect(view).toContain("from './scaling-panel.js'");
    const panel = await get('/assets/scaling-panel.js');
    expect(panel.status).toBe(200);
    expect(await panel.text()).toContain('Desired consumers');
  });
});
