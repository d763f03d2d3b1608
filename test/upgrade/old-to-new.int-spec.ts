import { uniqueTopic, useRedis } from '../support/queue-fixture';
import { checkDeliveries, inspectLeftovers, leaveEverything, serveLeftovers } from './support/leftovers';
import { usePreviousRelease } from './support/previous-release';

describe('upgrading from the previous release: what it left in Redis', () => {
  const fx = useRedis();
  const release = usePreviousRelease();

  it('is read, served exactly once and in order by the current code, after the old service stopped', async () => {
    expect(release.loadedVersion).toBe(release.version);
    const topic = uniqueTopic('upgrade');
    const old = await release.service({ connection: fx.server.url, keepCompleted: true, logLevel: 'error' });
    const leftovers = await leaveEverything(old, topic);
    // Stopped with its leases unacked, as a killed process leaves them: they come back once they expire.
    await old.close(0);

    const current = await fx.service();
    await inspectLeftovers(current, topic);
    const deliveries = await serveLeftovers(current, topic, fx.redis, leftovers);
    checkDeliveries(deliveries, leftovers);
  });
});
