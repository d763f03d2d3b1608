// The page's loop: a hash route (#/ for the topics, #/topic/<name> for one), a refresh every
// refreshMs (not while a dialog is open, the tab is hidden, or the operator turned it off),
// and focus kept on the same control across refreshes, for keyboard use.
import { settings } from './api.js';
import { announce, dialogOpen } from './feedback.js';
import { topicView } from './topic-view.js';
import { topicsView } from './topics-view.js';

const main = document.getElementById('main');
const updated = document.getElementById('updated');
const toggle = document.getElementById('refresh-toggle');
let current;
let auto = true;
let running = false;

function routeState() {
  const match = /^#\/topic\/(.+)$/.exec(location.hash);
  return match ? { topic: decodeURIComponent(match[1]) } : {};
}

const focusKey = (el) => el && el !== document.body && (el.id || el.getAttribute('aria-label') || el.textContent);

async function refresh() {
  if (!current || running) return;
  running = true;
  const active = main.contains(document.activeElement) ? focusKey(document.activeElement) : undefined;
  try {
    await current.refresh();
    updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.loaded = 'true';
  } catch (error) {
    updated.textContent = 'Could not refresh';
    announce(`Could not refresh: ${error.message}`, true);
  } finally {
    running = false;
  }
  if (active && !main.contains(document.activeElement)) {
    const again = [...main.querySelectorAll('button, input, a, [tabindex]')].find((el) => focusKey(el) === active);
    again?.focus();
  }
}

function show() {
  const state = routeState();
  const rerender = (changes) => {
    Object.assign(state, changes);
    return refresh();
  };
  current = (state.topic === undefined ? topicsView : topicView)(state, rerender);
  main.replaceChildren(current.view);
  document.title = `${state.topic ?? 'Topics'} · Queues`;
  main.querySelector('h1')?.setAttribute('tabindex', '-1');
  refresh().then(() => main.querySelector('h1')?.focus());
}

toggle.addEventListener('click', () => {
  auto = !auto;
  toggle.setAttribute('aria-pressed', String(auto));
  toggle.textContent = auto ? 'Auto refresh on' : 'Auto refresh off';
});
setInterval(() => {
  if (auto && !document.hidden && !dialogOpen()) refresh();
}, settings.refreshMs);
window.addEventListener('hashchange', show);
show();
