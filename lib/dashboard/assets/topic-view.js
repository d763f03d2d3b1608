// One topic: its gauges, pause state, history charts, messages by state (paged, found by id),
// dead-letter actions on one, the selected or all, bulk actions by filter, and its schedules with "run now".
import { api, settings } from './api.js';
import { bulkForm } from './bulk-form.js';
import { bulkStatusTable, followForm } from './bulk-status.js';
import { count, duration, h, label, pager } from './dom.js';
import { act, announce } from './feedback.js';
import { groupUsagePanel } from './group-usage-panel.js';
import { historyPanel } from './history-panel.js';
import { purge, requeue, showMessage, syncAddress } from './message-detail.js';
import { messageTable } from './messages-table.js';
import { rate, ratesOf } from './rates.js';
import { scalingPanel } from './scaling-panel.js';
import { scheduleTable } from './schedules-table.js';
import { gaugeOf, STATES } from './states.js';

const PAGE = 50;

export function topicView(state, rerender) {
  const { topic } = state;
  const refreshAll = () => rerender({});
  const head = h('div', { id: 'topic-head' });
  const history = historyPanel(topic);
  const scaling = scalingPanel(topic);
  const usage = groupUsagePanel(topic);
  const tabs = h('div', { role: 'tablist', 'aria-label': 'Messages by state', class: 'tabs' });
  // The tabs pattern: one tab in the Tab order, arrow keys (Home, End) move between them.
  tabs.addEventListener('keydown', (event) => {
    const at = STATES.indexOf(state.tab ?? 'ready');
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: STATES.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const tab = STATES[(next + STATES.length) % STATES.length];
    rerender({ tab, offset: 0, selected: new Set() }).then(() => document.getElementById(`tab-${tab}`)?.focus());
  });
  const list = h('div', { id: 'messages', role: 'tabpanel' });
  const schedules = h('div', { id: 'schedules' });
  // Made once, not at each refresh: what the operator typed in the form stays.
  const bulks = h('div', { id: 'bulks' });
  const bulkSection = [
    h('h2', {}, 'Bulk actions'),
    settings.readOnly ? '' : bulkForm(topic, refreshAll),
    followForm(topic, refreshAll),
    bulks,
  ];
  const find = h('input', { id: 'find-id', type: 'search', autocomplete: 'off', placeholder: 'Message id' });
  const findForm = h(
    'form',
    { class: 'toolbar', onsubmit: (event) => (event.preventDefault(), open(find.value.trim())) },
    h('label', { for: 'find-id' }, 'Find a message by id'),
    find,
    h('button', { type: 'submit' }, 'Find'),
  );
  // A tag filter of the messages' tabs: each tab then lists, and counts, only the messages with the tag.
  const tagInput = h('input', {
    id: 'tag-filter',
    type: 'search',
    autocomplete: 'off',
    placeholder: 'Tag',
    value: state.tag ?? '',
  });
  const tagForm = h(
    'form',
    {
      class: 'toolbar',
      id: 'tag-form',
      onsubmit: (event) => (
        event.preventDefault(),
        rerender({ tag: tagInput.value || undefined, offset: 0, selected: new Set() })
      ),
    },
    h('label', { for: 'tag-filter' }, 'Filter messages by tag'),
    tagInput,
    h('button', { type: 'submit' }, 'Filter'),
    h(
      'button',
      {
        type: 'button',
        id: 'tag-clear',
        onclick: () => ((tagInput.value = ''), rerender({ tag: undefined, offset: 0, selected: new Set() })),
      },
      'Clear',
    ),
  );
  /** Opens a message's details; `routed` when the address named it (kept on what is shown). */
  async function open(id, routed = false) {
    if (!id) return;
    try {
      showMessage(topic, await api.message(topic, id), refreshAll);
    } catch (error) {
      announce(`Failed: ${error.message}`, true);
      if (routed) syncAddress();
    }
  }
  const view = h(
    'section',
    { 'aria-labelledby': 'topic-title' },
    h('p', {}, h('a', { href: '#/' }, '← All topics')),
    h('h1', { id: 'topic-title' }, topic),
    head,
    scaling.element,
    history.element,
    usage.element,
    findForm,
    h('h2', {}, 'Messages'),
    tagForm,
    tabs,
    list,
    bulkSection,
    h('h2', {}, 'Schedules'),
    schedules,
  );

  async function refresh() {
    const tab = state.tab ?? 'ready';
    const offset = state.offset ?? 0;
    const selected = state.selected ?? (state.selected = new Set());
    list.setAttribute('aria-labelledby', `tab-${tab}`);
    const tag = state.tag;
    const [detail, messages, matching] = await Promise.all([
      api.topic(topic),
      api.messages(topic, tab, offset, PAGE, tag),
      tag === undefined ? undefined : api.count(topic, tab, tag),
      history.refresh(),
      scaling.refresh(),
      usage.refresh(),
    ]);
    const { gauges } = detail;
    head.replaceChildren(summary(topic, gauges, refreshAll));
    tabs.replaceChildren(
      ...STATES.map((s) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: `tab-${s}`,
            'aria-selected': String(s === tab),
            'aria-controls': 'messages',
            tabindex: s === tab ? 0 : -1,
            onclick: () => rerender({ tab: s, offset: 0, selected: new Set() }),
          },
          `${label(s)} (${count(gaugeOf(gauges, s))})`,
        ),
      ),
    );
    for (const id of [...selected]) if (!messages.some((m) => m.id === id)) selected.delete(id);
    list.replaceChildren(
      tab === 'dead' && !settings.readOnly ? deadActions(topic, gauges.dead, selected, refreshAll) : '',
      messages.length === 0
        ? h('p', { class: 'empty' }, tag === undefined ? `No ${tab} message.` : `No ${tab} message with this tag.`)
        : messageTable(topic, tab, messages, selected, open, rerender),
      pager({ offset, limit: PAGE, shown: messages.length, total: matching?.count ?? gaugeOf(gauges, tab) }, (next) =>
        rerender({ offset: next, selected: new Set() }),
      ),
    );
    schedules.replaceChildren(scheduleTable(topic, detail.schedules));
    bulks.replaceChildren(await bulkStatusTable(topic, refreshAll));
  }
  return { view, refresh, open };
}

function summary(topic, gauges, changed) {
  const rates = ratesOf(topic, gauges);
  const cards = [
    ...STATES.map((s) => [label(s), count(gaugeOf(gauges, s))]),
    ['In', rate(rates.in)],
    ['Out', rate(rates.out)],
    ['Lag', gauges.oldestReadyAgeMs < 0 ? '–' : duration(gauges.oldestReadyAgeMs)],
  ];
  const paused = gauges.paused;
  return h(
    'div',
    { class: 'summary' },
    h(
      'dl',
      { class: 'cards' },
      cards.map(([name, value]) => h('div', { class: 'card' }, h('dt', {}, name), h('dd', {}, value))),
    ),
    h(
      'p',
      { class: 'pause-line' },
      paused ? h('span', { class: 'badge paused' }, 'Paused') : h('span', { class: 'badge' }, 'Running'),
      settings.readOnly
        ? ''
        : h(
            'button',
            {
              type: 'button',
              id: 'pause-toggle',
              onclick: () =>
                act(
                  paused ? null : `Pause ${topic}? No consumer leases its messages until it is resumed.`,
                  'Pause',
                  () => api.setPaused(topic, !paused),
                  () => `${paused ? 'Resumed' : 'Paused'} ${topic}.`,
                ).then(changed),
            },
            paused ? 'Resume topic' : 'Pause topic',
          ),
    ),
  );
}

function deadActions(topic, total, selected, changed) {
  const ids = () => [...selected];
  const done = (ran) => ran.then((ok) => ok && (selected.clear(), changed()));
  return h(
    'div',
    { class: 'toolbar', role: 'group', 'aria-label': 'Dead letter actions' },
    h(
      'button',
      { type: 'button', disabled: selected.size === 0, onclick: () => done(requeue(topic, ids())) },
      `Requeue selected (${selected.size})`,
    ),
    h(
      'button',
      { type: 'button', class: 'danger', disabled: selected.size === 0, onclick: () => done(purge(topic, ids())) },
      `Purge selected (${selected.size})`,
    ),
    h(
      'button',
      { type: 'button', disabled: total === 0, onclick: () => done(requeue(topic, undefined, total)) },
      'Requeue all',
    ),
    h(
      'button',
      { type: 'button', class: 'danger', disabled: total === 0, onclick: () => done(purge(topic, undefined, total)) },
      'Purge all',
    ),
  );
}
