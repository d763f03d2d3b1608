// The transactional outbox (docs/outbox.md) on the overview: rows waiting for a relay, the
// oldest one's age, the dead rows (the first 20, with requeue and purge), and the relays that
// reported in the last 15 s. Hidden while the service has no outbox. Topics, ids, reasons and
// errors are the user's data: every cell goes in as text (dom.js's h()).
import { api, settings } from './api.js';
import { count, duration, h, scroller, time } from './dom.js';
import { act } from './feedback.js';

const plural = (n, word) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

/** The Outbox section of the overview; `refresh()` reads it, `changed` redraws the view after an action. */
export function outboxPanel(changed) {
  const element = h('section', { id: 'outbox', 'aria-labelledby': 'outbox-title', hidden: true });
  // The dead rows ticked, kept across refreshes while they are listed.
  const selected = new Set();
  let last;

  async function refresh() {
    let outbox;
    try {
      ({ outbox } = await api.outbox());
    } catch (error) {
      // Only a service with an outbox reads PostgreSQL: say why it could not be read.
      element.hidden = false;
      element.replaceChildren(
        h('h2', { id: 'outbox-title' }, 'Outbox'),
        h('p', { class: 'error', id: 'outbox-error' }, `Could not read the outbox: ${error.message}`),
      );
      return;
    }
    element.hidden = !outbox;
    last = outbox;
    if (!outbox) return element.replaceChildren();
    const listed = new Set(outbox.deadRows.map((row) => row.rowId));
    for (const rowId of selected) if (!listed.has(rowId)) selected.delete(rowId);
    draw();
  }

  function draw() {
    const outbox = last;
    const cards = [
      ['Waiting', count(outbox.depth), 'depth'],
      ['Oldest waiting', outbox.depth > 0 ? duration(outbox.oldestAgeMs) : '–', 'oldest'],
      ['Dead', count(outbox.dead), 'dead'],
      ['Relays', count(outbox.relays.length), 'relays'],
    ];
    element.replaceChildren(
      h('h2', { id: 'outbox-title' }, 'Outbox'),
      h(
        'dl',
        { class: 'cards', id: 'outbox-cards' },
        cards.map(([name, value, key]) =>
          h(
            'div',
            { class: 'card' },
            h('dt', {}, name),
            h('dd', { 'data-outbox': key, class: key === 'dead' && outbox.dead > 0 ? 'alert' : '' }, value),
          ),
        ),
      ),
      h('h3', {}, 'Relays'),
      outbox.relays.length === 0
        ? h('p', { class: 'empty', id: 'outbox-no-relay' }, 'No relay reported in the last 15 s.')
        : relayTable(outbox.relays),
      h('h3', {}, 'Dead rows'),
      h(
        'div',
        { id: 'outbox-dead' },
        outbox.dead === 0 ? h('p', { class: 'empty' }, 'No dead row.') : deadRows(outbox),
      ),
    );
  }

  function deadRows(outbox) {
    const shown = outbox.deadRows.length;
    return [
      settings.readOnly ? '' : deadActions(outbox.dead),
      scroller(
        'Dead outbox rows',
        h(
          'table',
          { class: 'grid', id: 'outbox-dead-table' },
          h('caption', { class: 'visually-hidden' }, 'Outbox rows the relay can never push'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              settings.readOnly ? '' : h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Select')),
              ['Row', 'Topic', 'Message id', 'Reason', 'Dead since'].map((name) => h('th', { scope: 'col' }, name)),
            ),
          ),
          h('tbody', {}, outbox.deadRows.map(deadRow)),
        ),
      ),
      shown < outbox.dead ? h('p', { class: 'muted' }, `The first ${count(shown)} of ${count(outbox.dead)}.`) : '',
    ];
  }

  function deadRow(row) {
    return h(
      'tr',
      { 'data-row': row.rowId },
      settings.readOnly
        ? ''
        : h(
            'td',
            {},
            h('input', {
              type: 'checkbox',
              'aria-label': `Select row ${row.rowId}`,
              checked: selected.has(row.rowId),
              onchange: (event) => {
                if (event.target.checked) selected.add(row.rowId);
                else selected.delete(row.rowId);
                draw();
              },
            }),
          ),
      h('td', { class: 'num' }, row.rowId),
      h('td', { 'data-field': 'topic' }, row.topic),
      h('td', {}, row.messageId === '' ? '–' : row.messageId),
      h('td', { class: 'error' }, row.reason),
      h('td', {}, time(row.deadAt)),
    );
  }

  function deadActions(total) {
    const ids = () => [...selected];
    const run = (action, rowIds, n) => {
      const verb = action === 'requeue' ? 'Requeue' : 'Purge';
      const question =
        action === 'requeue'
          ? `${verb} ${plural(n, 'dead outbox row')}? The relay pushes them again.`
          : `${verb} ${plural(n, 'dead outbox row')}? They are deleted for good.`;
      return act(
        question,
        verb,
        () => api.sweepOutbox(action, rowIds),
        (done) =>
          action === 'requeue'
            ? `Requeued ${plural(done.requeued, 'dead outbox row')}.`
            : `Purged ${plural(done.purged, 'dead outbox row')}.`,
      ).then((ok) => ok && (selected.clear(), changed()));
    };
    return h(
      'div',
      { class: 'toolbar', role: 'group', 'aria-label': 'Dead outbox row actions' },
      h(
        'button',
        { type: 'button', disabled: selected.size === 0, onclick: () => run('requeue', ids(), selected.size) },
        `Requeue selected rows (${selected.size})`,
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          disabled: selected.size === 0,
          onclick: () => run('purge', ids(), selected.size),
        },
        `Purge selected rows (${selected.size})`,
      ),
      h('button', { type: 'button', onclick: () => run('requeue', undefined, total) }, 'Requeue all rows'),
      h('button', { type: 'button', class: 'danger', onclick: () => run('purge', undefined, total) }, 'Purge all rows'),
    );
  }

  return { element, refresh };
}

function relayTable(relays) {
  return scroller(
    'Outbox relays',
    h(
      'table',
      { class: 'grid', id: 'outbox-relays-table' },
      h('caption', { class: 'visually-hidden' }, 'Outbox relays that reported in the last 15 s'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Host'),
          h('th', { scope: 'col', class: 'num' }, 'PID'),
          h('th', { scope: 'col' }, 'Redis'),
          h('th', { scope: 'col' }, 'Last error'),
          h('th', { scope: 'col', class: 'num' }, 'Relayed'),
          h('th', { scope: 'col', class: 'num' }, 'Lag'),
          h('th', { scope: 'col' }, 'Started'),
        ),
      ),
      h(
        'tbody',
        {},
        relays.map((relay) =>
          h(
            'tr',
            { 'data-relay': relay.id },
            h('th', { scope: 'row' }, relay.host),
            h('td', { class: 'num' }, String(relay.pid)),
            h(
              'td',
              {},
              relay.redisReachable
                ? h('span', { class: 'badge' }, 'Reachable')
                : h('span', { class: 'badge paused' }, 'Unreachable'),
            ),
            h('td', { class: relay.lastError ? 'error' : 'muted' }, relay.lastError ?? '–'),
            h('td', { class: 'num' }, count(relay.relayed)),
            h('td', { class: 'num' }, duration(relay.lagMs)),
            h('td', {}, time(relay.startedAt)),
          ),
        ),
      ),
    ),
  );
}
