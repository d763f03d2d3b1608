// A topic's last hour in a table cell: intake and acks per minute as two small lines (solid
// and dashed, each with its marker), dead letters as marked steps, and the same in words.
import { marker, STYLES } from './chart-marks.js';
import { count, h, s } from './dom.js';

const WIDTH = 120;
const HEIGHT = 28;
const [IN, OUT, , DEAD] = STYLES;

/** The sums a sparkline shows in words, over a history's points. */
export function totals(points) {
  const sum = (key) => points.reduce((total, point) => total + point[key], 0);
  return { pushed: sum('pushed'), acked: sum('acked'), dead: sum('dead') };
}

/** A sparkline of a history (a point a step): an SVG picture and its text. */
export function sparkline(history) {
  const { points } = history;
  const top = Math.max(1, ...points.flatMap((point) => [point.pushed, point.acked]));
  const x = (i) => 2 + (points.length <= 1 ? 0 : (i * (WIDTH - 4)) / (points.length - 1));
  const y = (v) => HEIGHT - 3 - (v / top) * (HEIGHT - 6);
  const line = (key, style) =>
    s('path', {
      d: points.map((point, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(point[key]).toFixed(1)}`).join(''),
      fill: 'none',
      stroke: style.color,
      'stroke-width': 1.5,
      'stroke-dasharray': style.dash,
      'data-series': key,
    });
  const last = points.length - 1;
  const picture = s(
    'svg',
    { class: 'sparkline', width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}`, 'aria-hidden': 'true' },
    line('pushed', IN),
    line('acked', OUT),
    last >= 0 ? marker(IN.marker, x(last), y(points[last].pushed), 2.5, IN.color) : null,
    last >= 0 ? marker(OUT.marker, x(last), y(points[last].acked), 2.5, OUT.color) : null,
    points.map((point, i) => (point.dead > 0 ? marker(DEAD.marker, x(i), HEIGHT - 4, 3, DEAD.color) : null)),
  );
  const sums = totals(points);
  const words = `${count(sums.pushed)} in, ${count(sums.acked)} out${sums.dead > 0 ? `, ${count(sums.dead)} dead` : ''}`;
  return h(
    'span',
    { class: 'trend', title: `Last hour, a step a minute: ${words}` },
    picture,
    h('span', { class: 'trend-text', 'data-trend-text': '' }, words),
  );
}
