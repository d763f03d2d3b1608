// A topic's history in its view: throughput, wait and handling times over the last hour (a
// step a minute) or the last 24 hours (a step every 15 minutes: 96 points, as readable as the
// hour's 60). Read at most every few seconds: the view refreshes more often than a step fills.
import { api } from './api.js';
import { count, h } from './dom.js';
import { historyChart } from './history-chart.js';

const RANGES = [
  { key: 'hour', label: 'Last hour', lastMs: 3_600_000, stepMs: 60_000, everyMs: 5_000, steps: '1-minute steps' },
  {
    key: 'day',
    label: 'Last 24 hours',
    lastMs: 86_400_000,
    stepMs: 900_000,
    everyMs: 30_000,
    steps: '15-minute steps',
  },
];

/** A time in ms as the readout shows it: one decimal below 10 ms, seconds from 1,000 ms. */
export function millis(ms) {
  if (typeof ms !== 'number') return '–';
  if (ms < 10) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${Math.round(ms / 100) / 10} s`;
}

const percentiles = (times) => [
  { key: 'p50', label: 'p50', value: (point) => point[times]?.p50 },
  { key: 'p95', label: 'p95', value: (point) => point[times]?.p95 },
  { key: 'p99', label: 'p99', value: (point) => point[times]?.p99 },
];
const timed = (times) => (point) =>
  `${count(point[times].count)} timed${point[times].mean === undefined ? '' : `, mean ${millis(point[times].mean)}`}`;

/** The History section of a topic's view: a range switch and three charts; `refresh()` reads when due. */
export function historyPanel(topic) {
  let range = RANGES[0];
  let readAt = 0;
  let asked = 0;
  const charts = [
    historyChart({
      id: 'chart-throughput',
      title: 'Throughput (messages per step)',
      series: [
        { key: 'pushed', label: 'In (pushed)', value: (point) => point.pushed },
        { key: 'acked', label: 'Out (acked)', value: (point) => point.acked },
        { key: 'retried', label: 'Failed (retried)', value: (point) => point.retried },
        { key: 'dead', label: 'Dead', value: (point) => point.dead },
      ],
      format: count,
      note: (point) => `cancelled ${count(point.cancelled)}`,
    }),
    historyChart({
      id: 'chart-wait',
      title: 'Wait, from due to leased',
      series: percentiles('wait'),
      format: millis,
      note: timed('wait'),
    }),
    historyChart({
      id: 'chart-handling',
      title: 'Handling, the handler’s run time',
      series: percentiles('handling'),
      format: millis,
      note: timed('handling'),
    }),
  ];
  const status = h('p', { class: 'muted', id: 'history-status' });
  const buttons = RANGES.map((option) =>
    h(
      'button',
      {
        type: 'button',
        id: `history-${option.key}`,
        'aria-pressed': String(option === range),
        onclick: () => {
          range = option;
          for (const [i, button] of buttons.entries()) button.setAttribute('aria-pressed', String(RANGES[i] === range));
          readAt = 0;
          return refresh();
        },
      },
      option.label,
    ),
  );
  const element = h(
    'section',
    { id: 'history', 'aria-labelledby': 'history-title' },
    h('h2', { id: 'history-title' }, 'History'),
    h('div', { class: 'toolbar', role: 'group', 'aria-label': 'History range' }, buttons),
    status,
    h(
      'div',
      { class: 'charts' },
      charts.map((chart) => chart.element),
    ),
  );

  async function refresh() {
    if (Date.now() - readAt < range.everyMs) return;
    readAt = Date.now();
    const ask = ++asked;
    const shown = range;
    try {
      const history = await api.history(topic, { lastMs: shown.lastMs, stepMs: shown.stepMs });
      // An answer overtaken by a later question (the other range) is dropped.
      if (ask !== asked) return;
      for (const chart of charts) chart.update(history);
      status.className = 'muted';
      status.textContent = `${shown.label}, ${shown.steps} on the Redis server's clock, newest on the right.`;
    } catch (error) {
      if (ask !== asked) return;
      readAt = 0;
      status.className = 'error';
      status.textContent = `Could not read the history: ${error.message}`;
    }
  }
  return { element, refresh };
}
