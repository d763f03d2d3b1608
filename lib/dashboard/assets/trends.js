// The topics table's trends: each shown topic's last hour, read at most every TREND_MS (a
// page of 50 topics is 50 reads) a few at a time, and drawn into its row when it arrives.
import { api } from './api.js';
import { h } from './dom.js';
import { sparkline } from './sparkline.js';

const TREND_MS = 30_000;
const AT_ONCE = 4;
/** topic -> { history, readAt }: what was read last. */
const read = new Map();
/** topic -> its trend cell in the table shown now. */
let cells = new Map();

/** The trend cell of a topic's row: its last history now, redrawn when a newer one arrives. */
export function trendCell(topic) {
  const cell = h('td', { class: 'trend-cell', 'data-trend': topic });
  const known = read.get(topic);
  if (known?.history) cell.append(sparkline(known.history));
  cells.set(topic, cell);
  return cell;
}

/** Starts a new table: cells of rows no longer shown are dropped. */
export function newTrendTable() {
  cells = new Map();
}

/** Reads the trends of `topics` not read in the last TREND_MS; a topic that fails keeps its old one. */
export async function refreshTrends(topics) {
  const due = topics.filter((topic) => !(Date.now() - (read.get(topic)?.readAt ?? 0) < TREND_MS));
  for (const topic of due) read.set(topic, { ...read.get(topic), readAt: Date.now() });
  const next = async () => {
    for (let topic = due.shift(); topic !== undefined; topic = due.shift()) {
      try {
        const history = await api.history(topic, {});
        read.set(topic, { history, readAt: Date.now() });
        cells.get(topic)?.replaceChildren(sparkline(history));
      } catch {
        // The row shows its gauges' error, if any; the trend stays as it was.
      }
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, next));
}
