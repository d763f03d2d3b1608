// The page's loop: a hash route (routes.js: the topics, a topic, a topic with a message's
// details open), a refresh every refreshMs (not while a dialog is open, the tab is hidden, or the
// operator turned it off), and focus kept on the same control across refreshes, for keyboard use.
import { settings } from './api.js';
import { h } from './dom.js';
import { announce, dialogOpen } from './feedback.js';
import { closeMessage } from './message-detail.js';
import { routeOf } from './routes.js';
import { topicView } from './topic-view.js';
import { topicsView } from './topics-view.js';

const main = document.getElementById('main');
const updated = document.getElementById('updated');
const toggle = document.getElementById('refresh-toggle');
let current;
let currentRoute = {};
let auto = true;
// The refresh in flight, and one asked for meanwhile (a tab, a page, another view): it runs once
// the first ends, so what was asked for is shown, not dropped because a refresh was running.
let running;
let next;

/** What a broken address shows instead of the view before it. */
function brokenView() {
  const view = h(
    'section',
    { 'aria-labelledby': 'broken-title' },
    h('h1', { id: 'broken-title' }, 'No such page'),
    h('p', { class: 'error' }, 'This address names no topic or message: check its %-escapes.'),
    h('p', {}, h('a', { href: '#/' }, '← All topics')),
  );
  return { view, refresh: async () => {} };
}

const focusKey = (el) => el && el !== document.body && (el.id || el.getAttribute('aria-label') || el.textContent);

function refresh() {
  if (!current) return Promise.resolve();
  if (running) {
    next ??= running
      .catch(() => {})
      .then(() => {
        next = undefined;
        return refresh();
      });
    return next;
  }
  running = render().finally(() => {
    running = undefined;
  });
  return running;
}

// The element last focused in the view: a refresh that redraws it (wherever the refresh started)
// puts the focus on its new copy, so a keyboard user keeps their place.
let focused;
main.addEventListener('focusin', (event) => {
  focused = event.target;
});

async function render() {
  try {
    await current.refresh();
    updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.loaded = 'true';
  } catch (error) {
    updated.textContent = 'Could not refresh';
    announce(`Could not refresh: ${error.message}`, true);
  }
  const lost = !document.activeElement || document.activeElement === document.body;
  if (focused && !focused.isConnected && lost) {
    const key = focusKey(focused);
    const again = [...main.querySelectorAll('button, input, a, [tabindex]')].find((el) => focusKey(el) === key);
    again?.focus();
  }
}

function show() {
  const state = routeOf(location.hash);
  const before = currentRoute;
  currentRoute = state;
  // The same topic, another message (or none): the view stays, only the details change.
  if (current && !state.broken && state.topic !== undefined && state.topic === before.topic && !before.broken) {
    if (state.message === undefined) closeMessage();
    else current.open(state.message, true);
    return;
  }
  closeMessage();
  const rerender = (changes) => {
    Object.assign(state, changes);
    return refresh();
  };
  current = state.broken ? brokenView() : (state.topic === undefined ? topicsView : topicView)(state, rerender);
  main.replaceChildren(current.view);
  document.title = `${state.broken ? 'No such page' : (state.topic ?? 'Topics')} · Queues`;
  main.querySelector('h1')?.setAttribute('tabindex', '-1');
  refresh().then(() => {
    main.querySelector('h1')?.focus();
    if (state.message !== undefined) current.open(state.message, true);
  });
}

toggle.addEventListener('click', () => {
  auto = !auto;
  toggle.setAttribute('aria-pressed', String(auto));
  toggle.textContent = auto ? 'Auto refresh on' : 'Auto refresh off';
});
setInterval(() => {
  if (auto && !running && !document.hidden && !dialogOpen()) refresh();
}, settings.refreshMs);
window.addEventListener('hashchange', show);
show();
