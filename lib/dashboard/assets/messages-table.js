// A page of messages of one state; dead letters with a checkbox each (and one for the page).
import { settings } from './api.js';
import { h, label, scroller, time } from './dom.js';
import { keyAndMode, waitsForKey } from './key-mode.js';
import { startBy } from './start-by.js';

const WHEN = {
  ready: ['Enqueued', 'enqueuedAt'],
  delayed: ['Due', 'dueAt'],
  leased: ['Lease until', 'leaseDeadline'],
  'waiting-children': ['Enqueued', 'enqueuedAt'],
  dead: ['Died', 'deadAt'],
  completed: ['Completed', 'completedAt'],
};

export function messageTable(topic, tab, messages, selected, open, rerender) {
  const selectable = tab === 'dead' && !settings.readOnly;
  const [whenLabel, whenKey] = WHEN[tab];
  // A key column only where a row has a key (dead letters and completed messages have left theirs).
  const keyed = messages.some((m) => m.key !== undefined);
  // A tags column only where a row has tags; a start-by column likewise.
  const tagged = messages.some((m) => m.tags !== undefined);
  const timed = messages.some((m) => m.startBy !== undefined);
  const all = h('input', {
    type: 'checkbox',
    'aria-label': 'Select every dead letter on this page',
    checked: messages.length > 0 && messages.every((m) => selected.has(m.id)),
    onchange: (event) => (
      messages.forEach((m) => (event.target.checked ? selected.add(m.id) : selected.delete(m.id))),
      rerender({})
    ),
  });
  const head = h(
    'tr',
    {},
    selectable ? h('th', { scope: 'col' }, all) : '',
    h('th', { scope: 'col' }, 'Id'),
    h('th', { scope: 'col', class: 'num' }, 'Attempt'),
    h('th', { scope: 'col' }, whenLabel),
    tab === 'dead'
      ? [h('th', { scope: 'col' }, 'Reason'), h('th', { scope: 'col' }, 'Error')]
      : h('th', { scope: 'col' }, 'Group'),
    tagged ? h('th', { scope: 'col' }, 'Tags') : '',
    keyed ? h('th', { scope: 'col' }, 'Key') : '',
    timed ? h('th', { scope: 'col' }, 'Start by') : '',
  );
  const rows = messages.map((m) =>
    h(
      'tr',
      { 'data-id': m.id },
      selectable
        ? h(
            'td',
            {},
            h('input', {
              type: 'checkbox',
              'aria-label': `Select ${m.id}`,
              checked: selected.has(m.id),
              onchange: (e) => (e.target.checked ? selected.add(m.id) : selected.delete(m.id), rerender({})),
            }),
          )
        : '',
      h('th', { scope: 'row' }, h('button', { type: 'button', class: 'link', onclick: () => open(m.id) }, m.id)),
      h('td', { class: 'num' }, tab === 'dead' ? String(m.attempt) : `${m.attempt}/${m.maxAttempts}`),
      h('td', {}, waitsForKey(m) ? 'waits for its key' : time(m[whenKey])),
      tab === 'dead'
        ? [h('td', {}, m.reason ?? '–'), h('td', { class: 'wrap' }, (m.error ?? '–').split('\n')[0])]
        : h('td', {}, m.group ?? '–'),
      tagged ? h('td', { class: 'wrap tags' }, (m.tags ?? []).join(', ') || '–') : '',
      keyed ? h('td', {}, keyAndMode(m)) : '',
      timed ? h('td', {}, startBy(m)) : '',
    ),
  );
  return scroller(
    `${label(tab)} messages`,
    h('table', { class: 'grid', id: 'messages-table' }, h('thead', {}, head), h('tbody', {}, rows)),
  );
}
