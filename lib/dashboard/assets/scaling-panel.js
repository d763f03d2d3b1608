// A topic's scaling signal in its view (setScalingTarget, docs/scaling.md): the consumers it
// needs and what they come from. Hidden while the topic has no target. Read at most every 5 s:
// each read moves the signal's smoothing on, as any scrape does.
import { api } from './api.js';
import { count, h } from './dom.js';
import { millis } from './history-panel.js';

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
      ['Arrival', `${Math.round(scaling.arrivalPerSecond * 10) / 10}/s`],
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
      h(
        'p',
        { class: 'empty' },
        `${scaling.minConsumers} to ${scaling.maxConsumers} consumers of ${scaling.concurrency} slots each; ` +
          `down after ${millis(scaling.cooldownMs)} lower.`,
      ),
    );
  }
  return { element, refresh };
}
