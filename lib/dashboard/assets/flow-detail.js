// A message's place in a flow (pushFlow), as sections of its details: its parent, its children
// with each one's outcome, and the tree from it down with each node's state. Every name links to
// that message's details (routes.js). A large flow shows a part and counts the rest: the server
// lists at most 100 children and answers at most 200 nodes of a tree.
import { api } from './api.js';
import { count, h } from './dom.js';
import { messageHref } from './routes.js';
import { STATES } from './states.js';
import { sealedText } from './sealed.js';

const OUTCOMES = ['failed', 'pending', 'acked'];
/** The nodes of a tree the page asks for (the server answers at most this many). */
const TREE_NODES = 200;

const plural = (n, word, words = `${word}s`) => `${count(n)} ${n === 1 ? word : words}`;
/** A state or outcome as a word, with a class for its colour (never the colour alone: the word is there). */
const stateBadge = (state) => h('span', { class: `state state-${state}` }, state.replaceAll('-', ' '));
const firstLine = (text) => (text ?? '').split('\n')[0];
const link = (topic, id) => h('a', { href: messageHref(topic, id) }, id);

/** A failure (`{ reason, error }`), a result preview, or a sealed result withheld (size, key id), as one line. */
function detail({ failure, preview, sealed, sealedResult }) {
  if (failure) return failure.error ? `${failure.reason}: ${firstLine(failure.error)}` : failure.reason;
  if (preview) return `${preview.text}${preview.truncated ? '…' : ''}`;
  if (sealed || sealedResult) return sealedText(sealed ?? sealedResult);
  return '–';
}

/** Of a flow's child: its parent, linked. */
export function parentSection(message) {
  if (!message.parent) return '';
  const { topic, id } = message.parent;
  return h(
    'section',
    { 'aria-labelledby': 'detail-parent-title' },
    h('h3', { id: 'detail-parent-title' }, 'Parent'),
    h('p', { id: 'detail-parent' }, link(topic, id), ' ', h('span', { class: 'muted' }, `on ${topic}`)),
  );
}

/** Of a flow's parent: its children counted by outcome, the first of them listed with theirs. */
export function childrenSection(message) {
  const counts = message.childCounts;
  if (!counts || !message.children) return '';
  const byOutcome = OUTCOMES.filter((o) => counts[o] > 0).map((o) => `${count(counts[o])} ${o}`);
  const rest = counts.total - message.children.length;
  const rows = message.children.map((child) =>
    h(
      'tr',
      { 'data-child': child.id },
      h('td', {}, child.topic),
      h('th', { scope: 'row' }, link(child.topic, child.id)),
      h('td', {}, stateBadge(child.outcome)),
      h('td', { class: 'wrap' }, detail(child)),
    ),
  );
  return h(
    'section',
    { 'aria-labelledby': 'detail-children-title' },
    h('h3', { id: 'detail-children-title' }, 'Children'),
    h(
      'p',
      { id: 'detail-children-count' },
      `${plural(counts.total, 'child', 'children')}: ${byOutcome.join(', ')}.`,
      rest > 0 ? ` Showing ${count(message.children.length)} (failed first); ${count(rest)} more not listed.` : '',
    ),
    h(
      'div',
      { class: 'scroll', role: 'region', 'aria-label': 'Children', tabindex: 0 },
      h(
        'table',
        { class: 'grid', id: 'detail-children' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Topic', 'Id', 'Outcome', 'Result or failure'].map((name) => h('th', { scope: 'col' }, name)),
          ),
        ),
        h('tbody', {}, rows),
      ),
    ),
  );
}

/** Of a flow's parent: the tree from it down, read when shown (a flow is read node by node). */
export function flowSection(topic, message) {
  if (!message.childCounts) return '';
  const body = h('div', { id: 'detail-flow-body' }, h('p', { class: 'muted' }, 'Reading the flow…'));
  api.flow(topic, message.id, TREE_NODES).then(
    (flow) => body.replaceChildren(...flowTree(flow, message.id, topic)),
    (error) => body.replaceChildren(h('p', { class: 'error' }, `Could not read the flow: ${error.message}`)),
  );
  return h(
    'section',
    { 'aria-labelledby': 'detail-flow-title', id: 'detail-flow' },
    h('h3', { id: 'detail-flow-title' }, 'Flow'),
    body,
  );
}

function flowTree(flow, id, topic) {
  const states = [...STATES, 'cancelled']
    .filter((state) => flow.states[state] > 0)
    .map((state) => `${count(flow.states[state])} ${state.replaceAll('-', ' ')}`);
  const node = (view) => {
    const self = view.id === id && view.topic === topic;
    return h(
      'li',
      { 'data-node': view.id },
      h(
        'span',
        { class: 'node' },
        self ? h('strong', { 'aria-current': 'true' }, view.id) : link(view.topic, view.id),
        h('span', { class: 'muted' }, view.topic),
        stateBadge(view.state),
        view.failure || view.preview || view.sealed ? h('span', { class: 'node-detail' }, detail(view)) : '',
      ),
      view.children.length > 0 || view.more > 0
        ? h(
            'ul',
            {},
            view.children.map(node),
            view.more > 0
              ? h('li', { class: 'muted more' }, `… ${plural(view.more, 'more child', 'more children')}`)
              : '',
          )
        : '',
    );
  };
  return [
    h(
      'p',
      { id: 'detail-flow-count' },
      `${plural(flow.total, 'node')}: ${states.join(', ')}.`,
      flow.shown < flow.total ? ` Showing ${count(flow.shown)}, level by level.` : '',
    ),
    h('ul', { class: 'tree', id: 'flow-tree', 'aria-label': 'Flow tree' }, node(flow.root)),
  ];
}
