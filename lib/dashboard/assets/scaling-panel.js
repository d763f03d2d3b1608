// A topic's scaling signal in its view (setScalingTarget, docs/scaling.md): the consumers it
// needs and what they come from. Hidden while the topic has no target. Read at most every 5 s:
// each read moves the signal's smoothing on, as any scrape does.
import { api } from './api.js';
import { count, h } from './dom.js';
import { millis } from './history-panel.js';
import { rate } from './rates.js';

const EVERY_MS = 5_000;

/** The Scaling section of a topic's view; `refresh()` reads when due. */
export function scalingPanel(topic) {
  const element = h('section', { id: 'scaling', 'aria-labelledby': 'scaling-title', hidden: true });
  let readAt = 0;

  async function refresh() {
    if (Date.now() - readAt < EVERY_MS) return;
    readAt = Date.now();
    let scaling;
    try {
      ({ scaling } = await api.scaling(topic));
    } catch {
      // A failed read leaves the last one shown; the view's own reads report Redis being down.
      return;
    }
    element.hidden = !scaling;
    if (!scaling) return element.replaceChildren();
    const cards = [
      ['Desired consumers', count(scaling.desiredConsumers)],
      ['Computed now', count(scaling.computedConsumers)],
      ['Arrival', rate(scaling.arrivalPerSecond)],
      ['Handling', scaling.handlingMs > 0 ? millis(scaling.handlingMs) : '–'],
      ['Backlog', count(scaling.backlog)],
      ['Target wait', millis(scaling.targetWaitMs)],
    ];
    element.replaceChildren(
      h('h2', { id: 'scaling-title' }, 'Scaling'),
      h(
        'dl',
        { class: 'cards', id: 'scaling-cards' },
        cards.map(([name, value]) => h('div', { class: 'card' }, h('dt', {}, name), h('dd', {}, value))),
      ),
      h('p', { class: 'muted', id: 'scaling-target' }, targetLine(scaling)),
    );
  }
  return { element, refresh };
}

/** The target's bounds in words: "Target: 0 to 40 consumers of 10 slots each; down after 30 s lower." */
function targetLine({ minConsumers, maxConsumers, concurrency, cooldownMs }) {
  const slots = concurrency === 1 ? '1 slot' : `${count(concurrency)} slots`;
  const down = cooldownMs === 0 ? 'down at once' : `down once the need has stayed lower for ${millis(cooldownMs)}`;
  return `Target: ${count(minConsumers)} to ${count(maxConsumers)} consumers of ${slots} each; ${down}.`;
}
