import { randomBytes } from 'node:crypto';
import { createEncryptionCodec } from '../../lib';
import { eventually, useRedis } from '../support/queue-fixture';
import { OPERATOR, startDashboardApp, type DashboardApp } from './dashboard-app';

/**
 * Values a codec sealed, over the dashboard's HTTP API: redacted (size and key id) unless the
 * option revealSealedPayloads is set and the serving app has the key. Checked on the raw
 * responses: what the browser could read, not what the page draws.
 */
describe('sealed values on the dashboard', () => {
  const fx = useRedis();
  const prefix = 'sealdash';
  const key = randomBytes(32);
  const codec = () => createEncryptionCodec({ keys: { v1: key }, currentKeyId: 'v1' });
  const apps: DashboardApp[] = [];
  let releaseWork: () => void = () => undefined;

  beforeAll(async () => {
    const worker = await fx.service({ prefix, codec: codec(), keepCompleted: true });
    await worker.push('mail', { to: 'CANARY-payload' }, { id: 'm1', headers: { secret: 'CANARY-header' } });
    await worker.push('done', { n: 1 }, { id: 'd1' });
    worker.consume('done', () => ({ receipt: 'CANARY-result' }));
    await worker.pushFlow({
      topic: 'book',
      id: 'b1',
      payload: { title: 'x' },
      children: [{ topic: 'page', id: 'p1', payload: { n: 1 } }],
    });
    worker.consume('page', () => ({ text: 'CANARY-child' }));
    await eventually(async () => (await worker.get('done', 'd1'))?.state === 'completed');
    await eventually(async () => (await worker.get('book', 'b1'))?.state === 'ready');
    // A running handler's progress and step result, sealed too.
    const held = new Promise<void>((resolve) => (releaseWork = resolve));
    worker.consume('work', async (_payload, context) => {
      context.progress({ note: 'CANARY-progress' });
      await context.step('lookup', () => 'CANARY-step');
      await held;
    });
    await worker.push('work', { n: 1 }, { id: 'w1' });
    await eventually(async () => {
      const info = await worker.get('work', 'w1');
      return info?.progress !== undefined && info.steps?.lookup !== undefined;
    });
  });
  afterAll(async () => {
    releaseWork();
    for (const app of apps) await app.close();
  });

  async function serve(reveal: boolean | undefined, withCodec: boolean) {
    const app = await startDashboardApp(
      'express',
      fx.connection,
      prefix,
      reveal === undefined ? {} : { revealSealedPayloads: reveal },
      withCodec ? { codec: codec(), keepCompleted: true } : { keepCompleted: true },
    );
    apps.push(app);
    /** Every read the page makes that may carry a value, as the raw texts the browser gets. */
    return async () => {
      const paths = [
        '/api/message?topic=mail&id=m1',
        '/api/messages?topic=mail&state=ready',
        '/api/message?topic=done&id=d1',
        '/api/messages?topic=done&state=completed',
        '/api/message?topic=book&id=b1',
        '/api/flow?topic=book&id=b1',
        '/api/message?topic=work&id=w1',
      ];
      const texts = await Promise.all(
        paths.map(async (path) => {
          const response = await fetch(`${app.url}${path}`, { headers: { authorization: OPERATOR } });
          expect(response.status).toBe(200);
          return response.text();
        }),
      );
      const [message, rows, completed, completedRows, parent, flow, running] = texts.map(
        (text) => JSON.parse(text) as unknown,
      );
      return { all: texts.join('\n'), message, rows, completed, completedRows, parent, flow, running };
    };
  }

  const described = { bytes: expect.any(Number) as unknown, keyId: 'v1' };

  it('sends a sealed value redacted, with its size and key id, when the option is off (the default)', async () => {
    const read = await serve(undefined, true);
    const seen = await read();
    expect(seen.all).not.toContain('CANARY');
    expect(seen.message).toMatchObject({ id: 'm1', state: 'ready', headers: {}, sealed: described });
    expect(seen.message).not.toHaveProperty('payload');
    expect(seen.rows).toEqual([expect.objectContaining({ id: 'm1', sealed: described })]);
    expect(seen.completed).toMatchObject({ state: 'completed', sealed: described, sealedResult: described });
    expect(seen.completed).not.toHaveProperty('result');
    expect(seen.completedRows).toEqual([expect.objectContaining({ id: 'd1', sealedResult: described })]);
    expect(seen.parent).toMatchObject({ children: [{ id: 'p1', outcome: 'acked', sealedResult: described }] });
    expect(seen.flow).toMatchObject({ root: { children: [{ id: 'p1', sealed: described }] } });
    expect(seen.running).toMatchObject({
      state: 'leased',
      sealedProgress: described,
      sealedSteps: { lookup: described },
    });
    expect(seen.running).not.toHaveProperty('progress');
    // The same with the option given as false.
    expect((await (await serve(false, true))()).all).not.toContain('CANARY');
  });

  it('sends sealed values opened when the option is on and the app has the key', async () => {
    const seen = await (await serve(true, true))();
    expect(seen.message).toMatchObject({
      payload: { to: 'CANARY-payload' },
      headers: { secret: 'CANARY-header' },
      sealed: described,
    });
    expect(seen.completed).toMatchObject({ result: { receipt: 'CANARY-result' }, sealedResult: described });
    expect(seen.running).toMatchObject({
      progress: { note: 'CANARY-progress' },
      steps: [{ name: 'lookup', value: 'CANARY-step' }],
    });
    expect(seen.parent).toMatchObject({
      children: [{ id: 'p1', preview: { text: '{"text":"CANARY-child"}' }, sealedResult: described }],
    });
    expect(seen.flow).toMatchObject({
      root: { children: [{ id: 'p1', preview: { text: '{"text":"CANARY-child"}' } }] },
    });
  });

  it('sends them redacted, saying why, when the option is on but the app has no codec', async () => {
    const seen = await (await serve(true, false))();
    expect(seen.all).not.toContain('CANARY');
    expect(seen.message).toMatchObject({ headers: {}, sealed: { ...described, undecodable: 'no-codec' } });
    expect(seen.flow).toMatchObject({
      root: { children: [{ id: 'p1', sealed: { ...described, undecodable: 'no-codec' } }] },
    });
  });

  it('refuses a revealSealedPayloads that is not a boolean', async () => {
    await expect(serve('yes' as unknown as boolean, true)).rejects.toMatchObject({
      code: 'INVALID_OPTION',
      option: 'revealSealedPayloads',
    });
  });
});
