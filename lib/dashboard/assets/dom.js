// Building the page: every text goes in as text (never as HTML), so a payload or a topic name
// can never inject markup or script.

/** An element with attributes, listeners (on*) and children. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'checked' || key === 'indeterminate' || key === 'value') el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** A state or column name as a heading: ready -> Ready, waiting-children -> Waiting children. */
export const label = (name) => name[0].toUpperCase() + name.slice(1).replaceAll('-', ' ');

const numbers = new Intl.NumberFormat('en-US');
export const count = (n) => (typeof n === 'number' ? numbers.format(n) : '–');

/** A duration in ms as people read it: 850 ms, 12 s, 4 min, 3 h, 2 d. */
export function duration(ms) {
  if (typeof ms !== 'number' || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${Math.round(ms / 360_000) / 10} h`;
  return `${Math.round(ms / 8_640_000) / 10} d`;
}

/**
 * An epoch-ms time in the viewer's zone, with a machine-readable datetime. A number no Date can
 * hold (past ±8.64e15 ms, written by an older version or another client) shows as the number.
 */
export function time(ms) {
  if (typeof ms !== 'number' || ms <= 0) return '–';
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return `${count(ms)} ms (not a date)`;
  return h('time', { datetime: date.toISOString(), title: date.toISOString() }, date.toLocaleString());
}

/** A labelled wrapper that lets a wide table scroll sideways on a phone. */
export const scroller = (label, table) =>
  h('div', { class: 'scroll', role: 'region', 'aria-label': label, tabindex: 0 }, table);

/** Pretty JSON of a value, as text. */
export function json(value) {
  if (value === undefined) return '(none)';
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** Previous / next buttons with the range shown, for a list of `total` rows (or unknown). */
export function pager({ offset, limit, shown, total }, go) {
  const end = offset + shown;
  const more = total === undefined ? shown === limit : end < total;
  const range =
    shown === 0 ? 'none' : `${count(offset + 1)}–${count(end)}${total === undefined ? '' : ` of ${count(total)}`}`;
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)) }, 'Previous'),
    h('span', { class: 'muted' }, range),
    h('button', { type: 'button', disabled: !more, onclick: () => go(offset + limit) }, 'Next'),
  );
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes and children; text goes in as text, as with h. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null && value !== false) el.setAttribute(key, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}
