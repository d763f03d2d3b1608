import { Histogram, Registry } from 'prom-client';
import { TallyHistogram } from '../../lib/metrics/tally-histogram';

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const VALUES = [0, 0.0004, 0.001, 0.0011, 0.007, 0.3, 2.5, 59, 61, 1e6, 0.02];

/** Two registries, one with prom-client's Histogram and one with TallyHistogram, fed alike. */
function both(buckets: number[], defaultLabels?: Record<string, string>) {
  const [theirs, ours] = [new Registry(), new Registry()];
  if (defaultLabels) for (const registry of [theirs, ours]) registry.setDefaultLabels(defaultLabels);
  const reference = new Histogram({
    name: 'h_seconds',
    help: 'help',
    labelNames: ['topic'],
    buckets,
    registers: [theirs],
  });
  const tally = new TallyHistogram('h_seconds', 'help', buckets, ours);
  const observe = (topic: string, value: number) => {
    reference.labels(topic).observe(value);
    tally.observe(topic, value);
  };
  return { theirs, ours, observe, reference, tally };
}

describe('TallyHistogram', () => {
  it('answers the text exposition of a prom-client Histogram fed the same values, topic by topic', async () => {
    const { theirs, ours, observe } = both(BUCKETS);
    expect(await ours.metrics()).toBe(await theirs.metrics());
    VALUES.forEach((value, i) => observe(i % 3 === 0 ? 'b' : 'a "quoted"\n', value));
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('h_seconds_bucket{le="0.001",topic="b"} 1');
  });

  it('answers the same JSON, with default labels and other buckets, and empties on reset', async () => {
    const { theirs, ours, observe, reference, tally } = both([0.5, 0.1, 2], { app: 'x' });
    VALUES.forEach((value) => observe('t', value));
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
    expect(await ours.metrics()).toBe(await theirs.metrics());
    reference.reset();
    tally.reset();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    ours.removeSingleMetric('h_seconds');
    expect(await ours.metrics()).not.toContain('h_seconds');
  });
});
