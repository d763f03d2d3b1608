import type { INestApplication } from '@nestjs/common';
import { filter, firstValueFrom } from 'rxjs';
import { RedisAckQueueService } from '../../lib';
import type { Order, Shipment } from '../../sample-app/orders/orders.store';
import type { ShipmentView } from '../../sample-app/orders/shipments.controller';
import { TOPICS } from '../../sample-app/orders/topics';
import { expectLogs } from '../support/capture-logs';
import { useRedis } from '../support/queue-fixture';
import { postJson, readJson, startSampleApp } from '../support/sample-http';

/** The sample's shipments: a flow (a pick per order, then the dispatch) whose dispatch takes durable steps. */
describe('sample app shipments (a flow with durable steps, HTTP, real Redis)', () => {
  const fx = useRedis();
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startSampleApp(fx.server.url, { PICKUP_FAILURES: '1' }));
  });
  afterAll(() => app.close());

  it('dispatches once every order was picked, with their items, and buys one label across a retry', async () => {
    const queue = app.get(RedisAckQueueService);
    // The dispatch's first attempt fails at the pickup booking (PICKUP_FAILURES=1), after its label step.
    expectLogs(/Carrier booking for shipment-.* unavailable \(attempt 1\)/);
    const orders: Order[] = [];
    for (const item of ['book', 'lamp', 'desk'])
      orders.push(await readJson<Order>(postJson(`${url}/orders`, { item, amount: 5 })));
    // The parent's ack: it runs after its children, fails once, and is retried. Heard from before the push.
    const dispatched = firstValueFrom(
      queue.events$.pipe(filter(({ type, topic }) => type === 'acked' && topic === TOPICS.shipmentDispatch)),
    );
    const response = await postJson(`${url}/shipments`, { orderIds: orders.map(({ id }) => id) });
    expect(response.status).toBe(202);
    const shipment = await readJson<Shipment>(response);
    expect((await dispatched).id).toBe(shipment.id);
    const view = await readJson<ShipmentView>(fetch(`${url}/shipments/${shipment.id}`));
    expect(view).toMatchObject({ status: 'dispatched', tracking: `TRACK-${shipment.id}`, attempt: 2, labelsBought: 1 });
    expect(view.picked?.map(({ item }) => item).sort()).toEqual(['book', 'desk', 'lamp']);
  });

  it('refuses a shipment of unknown or repeated orders with 400 and stores no flow', async () => {
    const order = await readJson<Order>(postJson(`${url}/orders`, { item: 'pen', amount: 1 }));
    for (const orderIds of [[], ['no-such-order'], [order.id, order.id], 'x']) {
      expect((await postJson(`${url}/shipments`, { orderIds })).status).toBe(400);
    }
    expect(await app.get(RedisAckQueueService).stats(TOPICS.shipmentPick)).toMatchObject({ ready: 0 });
  });
});
