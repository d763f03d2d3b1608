// Rates from the topic counters in Redis (gauges' pushedTotal and ackedTotal): the change
// since the previous refresh, per second. Every process's pushes and acks count, not only
// this app's.
import { count } from './dom.js';

const samples = new Map();
/** Refreshes closer together than this keep the rates of the last sample. */
const MIN_GAP_MS = 500;

/** `{ in, out }` messages per second for a topic; undefined until two samples are apart. */
export function ratesOf(topic, gauges, now = Date.now()) {
  const previous = samples.get(topic);
  if (previous && now - previous.at < MIN_GAP_MS) return previous.rates;
  const perSecond = (total, before) =>
    previous ? (Math.max(0, total - before) * 1000) / (now - previous.at) : undefined;
  const rates = {
    in: perSecond(gauges.pushedTotal, previous?.pushed),
    out: perSecond(gauges.ackedTotal, previous?.acked),
  };
  samples.set(topic, { at: now, pushed: gauges.pushedTotal, acked: gauges.ackedTotal, rates });
  return rates;
}

/** A rate as people read it: '–' before it is known, one decimal below 10. */
export function rate(perSecond) {
  if (perSecond === undefined) return '–';
  return `${perSecond < 10 ? Math.round(perSecond * 10) / 10 : count(Math.round(perSecond))}/s`;
}
