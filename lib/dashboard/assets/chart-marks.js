// How the charts tell their lines apart without colour alone: each line has a colour, a dash
// pattern and a marker shape, and the legend shows all three beside the line's name.
import { s } from './dom.js';

/** Line styles in the order series take them (colours at least 3:1 on white). */
export const STYLES = [
  { color: '#0a58ca', dash: '', marker: 'circle' },
  { color: '#a34700', dash: '7 4', marker: 'square' },
  { color: '#6f42c1', dash: '2 3', marker: 'triangle' },
  { color: '#b42318', dash: '9 3 2 3', marker: 'diamond' },
];

/** A marker of `shape` centred on x, y, `r` from its centre to its edge. */
export function marker(shape, x, y, r, color, extra = {}) {
  const common = { fill: color, stroke: '#ffffff', 'stroke-width': 1, ...extra };
  if (shape === 'circle') return s('circle', { cx: x, cy: y, r, ...common });
  if (shape === 'square') return s('rect', { x: x - r, y: y - r, width: 2 * r, height: 2 * r, ...common });
  const points =
    shape === 'triangle'
      ? [
          [x, y - r * 1.2],
          [x + r * 1.2, y + r],
          [x - r * 1.2, y + r],
        ]
      : [
          [x, y - r * 1.3],
          [x + r * 1.3, y],
          [x, y + r * 1.3],
          [x - r * 1.3, y],
        ];
  return s('polygon', { points: points.map((p) => p.join(',')).join(' '), ...common });
}

/** A short stretch of a style's line with its marker: the legend's picture of a series. */
export function sample(style) {
  return s(
    'svg',
    { class: 'legend-sample', width: 34, height: 12, viewBox: '0 0 34 12', 'aria-hidden': 'true', focusable: 'false' },
    s('line', { x1: 1, y1: 6, x2: 33, y2: 6, stroke: style.color, 'stroke-width': 2, 'stroke-dasharray': style.dash }),
    marker(style.marker, 17, 6, 3.5, style.color),
  );
}
