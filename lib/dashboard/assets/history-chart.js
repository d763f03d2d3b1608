// A line chart of a topic's history, drawn in SVG by the page. A cursor marks one step; its
// values are written out below the chart. The chart is a slider for the keyboard (arrow keys,
// Page Up/Down by ten, Home, End) and follows the pointer on hover; until moved, the cursor
// stays on the newest step.
import { marker, sample, STYLES } from './chart-marks.js';
import { h, s } from './dom.js';

const HEIGHT = 210;
const MARGIN = { left: 56, right: 14, top: 12, bottom: 28 };
/** About how many markers a line carries (one per point would hide the line). */
const MARKERS = 12;
const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** A maximum for the y axis: 1, 2 or 5 times a power of ten (its fifths are round), at least `max` and `floor`. */
function roundUp(max, floor) {
  const target = Math.max(max, floor);
  const power = 10 ** Math.floor(Math.log10(target));
  return [1, 2, 5, 10].map((k) => k * power).find((v) => v >= target);
}

/** The steps between two x-axis labels: about six labels, on whole hours where steps allow. */
function labelEvery(count) {
  return Math.max(1, Math.ceil(count / 6));
}

/**
 * A chart of `series` ({ key, label, value(point) }) over a history's points. `format` writes a
 * value (the axis and the readout); `note(point)`, when given, adds a text to a step's readout.
 * Answers { element, update(history) }; update redraws in place, so focus stays on the chart.
 */
export function historyChart({ id, title, series, format, note, floor = 1 }) {
  const styled = series.map((line, i) => ({ ...line, style: STYLES[i % STYLES.length] }));
  let points = [];
  let stepMs = 60_000;
  let cursor;
  let followNewest = true;

  const plot = s('svg', { class: 'chart-plot', 'aria-hidden': 'true', focusable: 'false' });
  const readout = h('p', { class: 'readout', id: `${id}-readout` });
  const frame = h('div', {
    class: 'chart-frame',
    tabindex: 0,
    role: 'slider',
    'aria-label': `${title}: the step shown (arrow keys move it)`,
    'aria-describedby': `${id}-readout`,
  });
  frame.append(plot);
  const legend = h(
    'ul',
    { class: 'legend', 'aria-label': `${title}: lines` },
    styled.map((line) => h('li', {}, sample(line.style), line.label)),
  );
  const element = h(
    'figure',
    { class: 'chart', id },
    h('figcaption', {}, h('span', { class: 'chart-title' }, title), legend),
    frame,
    readout,
  );

  const move = (index) => {
    if (points.length === 0) return;
    cursor = Math.min(points.length - 1, Math.max(0, index));
    followNewest = cursor === points.length - 1;
    draw();
  };
  frame.addEventListener('keydown', (event) => {
    const step = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -10, PageUp: 10 }[event.key];
    const to = { Home: 0, End: points.length - 1 }[event.key];
    if (step === undefined && to === undefined) return;
    event.preventDefault();
    move(to ?? (cursor ?? points.length - 1) + step);
  });
  frame.addEventListener('pointermove', (event) => {
    const box = plot.getBoundingClientRect();
    if (box.width === 0 || points.length === 0) return;
    const x = ((event.clientX - box.left) * Number(plot.getAttribute('width'))) / box.width;
    const width = Number(plot.getAttribute('width')) - MARGIN.left - MARGIN.right;
    move(Math.round(((x - MARGIN.left) / width) * Math.max(1, points.length - 1)));
  });
  new ResizeObserver(() => draw()).observe(frame);

  function update(history) {
    const shown = cursor === undefined ? undefined : points[cursor]?.at;
    points = history.points;
    stepMs = history.stepMs;
    const again = points.findIndex((point) => point.at === shown);
    cursor = followNewest || again < 0 ? points.length - 1 : again;
    element.dataset.steps = String(points.length);
    draw();
  }

  function draw() {
    const width = Math.max(280, Math.round(frame.clientWidth || 640));
    plot.setAttribute('width', String(width));
    plot.setAttribute('height', String(HEIGHT));
    plot.setAttribute('viewBox', `0 0 ${width} ${HEIGHT}`);
    if (points.length === 0) {
      plot.replaceChildren(s('text', { x: width / 2, y: HEIGHT / 2, 'text-anchor': 'middle' }, 'No history yet'));
      readout.textContent = 'No history yet.';
      frame.setAttribute('aria-valuetext', 'No history yet');
      return;
    }
    const plotWidth = width - MARGIN.left - MARGIN.right;
    const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
    const values = styled.flatMap((line) => points.map(line.value)).filter((v) => typeof v === 'number');
    const top = roundUp(Math.max(0, ...values), floor);
    const x = (i) => MARGIN.left + (points.length === 1 ? plotWidth / 2 : (i * plotWidth) / (points.length - 1));
    const y = (v) => MARGIN.top + plotHeight - (v / top) * plotHeight;
    plot.replaceChildren(
      axes(top, format, x, y, plotWidth),
      ...styled.map((line, n) => drawLine(line, n, x, y)),
      drawCursor(x(cursor), y),
    );
    writeReadout();
  }

  function axes(top, formatValue, x, y, plotWidth) {
    const grid = [0, 0.2, 0.4, 0.6, 0.8, 1].map((k) =>
      s(
        'g',
        { class: 'grid-line' },
        s('line', { x1: MARGIN.left, x2: MARGIN.left + plotWidth, y1: y(top * k), y2: y(top * k) }),
        s('text', { x: MARGIN.left - 6, y: y(top * k) + 4, 'text-anchor': 'end' }, formatValue(top * k)),
      ),
    );
    const every = labelEvery(points.length);
    const ticks = points
      .map((point, i) => [point, i])
      .filter(([, i]) => (points.length - 1 - i) % every === 0)
      .map(([point, i]) =>
        s(
          'text',
          {
            class: 'tick',
            x: x(i),
            y: HEIGHT - 8,
            'text-anchor': x(i) > MARGIN.left + plotWidth - 20 ? 'end' : 'middle',
          },
          clock.format(point.at),
        ),
      );
    return s('g', {}, grid, ticks);
  }

  function drawLine(line, n, x, y) {
    let d = '';
    let open = false;
    const marks = [];
    const every = Math.max(1, Math.round(points.length / MARKERS));
    points.forEach((point, i) => {
      const v = line.value(point);
      if (typeof v !== 'number') return void (open = false);
      d += `${open ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
      open = true;
      const lonely =
        typeof line.value(points[i - 1] ?? {}) !== 'number' && typeof line.value(points[i + 1] ?? {}) !== 'number';
      // Markers of each line at other steps, so lines drawn on top of each other stay told apart.
      if (lonely || (i + Math.round((n * every) / styled.length)) % every === 0) {
        marks.push(marker(line.style.marker, x(i), y(v), 3.5, line.style.color));
      }
    });
    const { color, dash } = line.style;
    return s(
      'g',
      { class: 'series', 'data-series': line.key },
      s('path', { d, fill: 'none', stroke: color, 'stroke-width': 2, 'stroke-dasharray': dash }),
      marks,
    );
  }

  function drawCursor(at, y) {
    const point = points[cursor];
    return s(
      'g',
      { class: 'cursor' },
      s('line', { x1: at, x2: at, y1: MARGIN.top, y2: HEIGHT - MARGIN.bottom }),
      styled.map((line) => {
        const v = line.value(point);
        return typeof v === 'number' ? marker(line.style.marker, at, y(v), 5.5, line.style.color) : null;
      }),
    );
  }

  function writeReadout() {
    const point = points[cursor];
    const when = `${clock.format(point.at)} to ${clock.format(point.at + stepMs)}`;
    const items = styled.map((line) =>
      h(
        'span',
        { class: 'readout-item' },
        sample(line.style),
        `${line.label} `,
        h('strong', { 'data-value': line.key }, format(line.value(point))),
      ),
    );
    const extra = note ? note(point) : '';
    readout.replaceChildren(h('span', { class: 'readout-time' }, when), ...items, extra ? h('span', {}, extra) : '');
    readout.dataset.at = String(point.at);
    frame.setAttribute('aria-valuemin', '1');
    frame.setAttribute('aria-valuemax', String(points.length));
    frame.setAttribute('aria-valuenow', String(cursor + 1));
    const spoken = styled.map((line) => `${line.label} ${format(line.value(point))}`);
    frame.setAttribute('aria-valuetext', `${when}: ${[...spoken, extra].filter(Boolean).join(', ')}`);
  }

  return { element, update };
}
